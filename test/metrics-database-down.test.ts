/**
 * `/metrics` while the database is away: the scrape still answers 200, with
 * `dispatch_database_up 0` and the process's own metrics, the database's
 * figures left out rather than made up, whether Postgres refuses connections
 * or hangs without a word (a read that has not answered within 5 s counts as
 * failed, inside Prometheus's default 10 s scrape timeout). The service
 * reaches its database through a relay the test cuts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloneDatabase } from "./support/database";
import { seriesValue } from "./support/metrics-text";
import { poll } from "./support/poll";
import { startTestService, type TestService } from "./support/service";
import { TcpRelay } from "./support/tcp-relay";

const METRICS_TOKEN = "metrics-token-database-down-0123456789";
let relay: TcpRelay;
let dispatch: TestService;

beforeAll(async () => {
  const url = new URL(await cloneDatabase());
  relay = await TcpRelay.start({ host: url.hostname, port: Number(url.port) });
  url.port = String(relay.port);
  // A connection to a silent host gives up after connect_timeout (5 s by default); one already open never does.
  // Past the scrape's deadline either way, what answers the hung scrape is the deadline.
  url.searchParams.set("connect_timeout", "60");
  dispatch = await startTestService({ metricsToken: METRICS_TOKEN }, { role: "api", databaseUrl: url.toString() });
});

afterAll(async () => {
  await dispatch?.stop();
  await relay?.close();
});

/** A scrape as Prometheus makes it, and how long it took. */
async function scrape() {
  const started = Date.now();
  const response = await fetch(`${dispatch.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  return { status: response.status, text: await response.text(), ms: Date.now() - started };
}

/** The first scrape that reads `dispatch_database_up` as `up` (a scrape's read also serves those of the next 100 ms). */
async function scrapeWhenUpIs(up: 0 | 1) {
  let last: Awaited<ReturnType<typeof scrape>> | undefined;
  await poll(async () => seriesValue((last = await scrape()).text, "dispatch_database_up") === up, `dispatch_database_up ${up}`);
  return last!;
}

it("reads the database while it answers", async () => {
  const { status, text } = await scrape();
  expect(status).toBe(200);
  expect(seriesValue(text, "dispatch_database_up")).toBe(1);
  expect(seriesValue(text, "dispatch_dlq_size", { project: "default" })).toBe(0);
});

it("answers with dispatch_database_up 0 and the process's metrics when Postgres refuses connections, and 1 once it is back", async () => {
  await relay.close();
  const { status, text } = await scrapeWhenUpIs(0);
  expect(status).toBe(200);
  expect(seriesValue(text, "dispatch_process_resident_memory_bytes")).toBeGreaterThan(0);
  for (const name of ["dispatch_messages_waiting", "dispatch_messages_in_flight", "dispatch_dlq_size", "dispatch_messages_overdue_seconds"]) {
    expect(seriesValue(text, name), name).toBeUndefined();
  }
  await relay.open();
  await scrapeWhenUpIs(1);
});

it("answers within the scrape timeout with dispatch_database_up 0 when Postgres hangs", async () => {
  relay.stall();
  try {
    const { status, ms } = await scrapeWhenUpIs(0);
    expect(status).toBe(200);
    expect(ms).toBeLessThan(9_000);
  } finally {
    await relay.open();
  }
  await scrapeWhenUpIs(1);
});
