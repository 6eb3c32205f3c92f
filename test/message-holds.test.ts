/**
 * Why a pending message waits (domain/messages/hold.ts), decided from the
 * engine's real state: messages made to wait by a delay, a retry's backoff,
 * a paused queue, a queue's parallelism, a flow-control key that is paused or
 * at its parallelism or rate, an attempt in flight, and a message due with no
 * worker to take it; each read back as the dashboard reads it.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Sql } from "../src/db/client";
import { type Hold, holdOf } from "../src/domain/messages/hold";
import { findMessage } from "../src/domain/messages/message";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { startTestService, useDispatch } from "./support/service";

const dispatch = useDispatch();
/** Requests to /slow wait until the test lets them go; /fail answers 500 with a body. */
const gate = { open: (): void => undefined };
const opened = new Promise<void>((resolve) => (gate.open = resolve));
const receiver = useReceiver(async (request) => {
  if (request.path.startsWith("/slow")) await opened;
  if (request.path === "/fail") return { status: 500, body: '{"error":"receiver is down on purpose"}' };
  return { status: 200, body: "ok" };
});
afterAll(() => gate.open());
/** A destination whose circuit the line test opens by hand. */
const closed = useReceiver();

async function publish(path: string, headers: Record<string, string> = {}, prefix = "/v2/publish/") {
  const response = await dispatch.api(`${prefix}${receiver.url}${path}`, { method: "POST", headers, body: "{}" });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.messageId as string;
}

async function holdIn(sql: Sql, id: string): Promise<Hold> {
  return sql.begin("isolation level repeatable read read only", async (tx) => holdOf(tx, (await findMessage(tx, id))!));
}
const hold = (id: string) => holdIn(dispatch.service.sql, id);
/** Waits until the message's hold is of `kind`, and returns it. */
const holdOfKind = <K extends Hold["kind"]>(id: string, kind: K) =>
  poll(async () => {
    const found = await hold(id);
    return found.kind === kind && (found as Extract<Hold, { kind: K }>);
  }, async () => `${id} to be held by ${kind}, it is ${JSON.stringify(await hold(id))}`);

describe("why a message is waiting", () => {
  it("says a delayed message waits for its time, and a delivered one is finished", async () => {
    const delayed = await publish("/later", { "Svc-Delay": "1h" });
    const found = await hold(delayed);
    expect(found.kind).toBe("delayed");
    expect((found as { until: Date }).until.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    const delivered = await publish("/now");
    await holdOfKind(delivered, "finished");
  });

  it("says a retrying message is in its backoff, which attempt comes next, and the last answer", async () => {
    const id = await publish("/fail", { "Svc-Retries": "2", "Svc-Retry-Delay": "1000000000" });
    const found = await holdOfKind(id, "retry-backoff");
    expect(found).toMatchObject({ attempt: 2, attempts: 3, last: { status: 500 } });
    expect(found.last!.body!.toString()).toBe('{"error":"receiver is down on purpose"}');
    expect(found.until.getTime()).toBeGreaterThan(Date.now());
  });

  it("says a message waits in a paused queue, or behind its queue's parallelism, and names the queue before it", async () => {
    for (const [queueName, paused] of [["a-holds", false], ["b-holds-paused", true]] as const) {
      const created = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName, parallelism: 1, paused }) });
      expect(created.status).toBe(200);
    }
    const inPaused = await publish("/queued", {}, "/v2/enqueue/b-holds-paused/");
    expect(await hold(inPaused)).toEqual({ kind: "paused-queue", queue: "b-holds-paused", before: "a-holds" });

    const first = await publish("/slow/queued", {}, "/v2/enqueue/a-holds/");
    await holdOfKind(first, "in-flight");
    const second = await publish("/slow/queued", {}, "/v2/enqueue/a-holds/");
    const third = await publish("/slow/queued", {}, "/v2/enqueue/a-holds/");
    expect(await hold(second)).toEqual({ kind: "queue-parallelism", queue: "a-holds", before: null, parallelism: 1, inFlight: 1, ahead: 0 });
    expect(await hold(third)).toMatchObject({ kind: "queue-parallelism", ahead: 1 });
  });

  it("says a message is held by its flow-control key: at its parallelism, while paused, at its rate", async () => {
    const busy = await publish("/slow/keyed", { "Svc-Flow-Control-Key": "holds-par", "Svc-Flow-Control-Value": "parallelism=1" });
    const inFlight = await holdOfKind(busy, "in-flight");
    expect(inFlight.claimedAt).toBeInstanceOf(Date);
    const waiting = await publish("/keyed", { "Svc-Flow-Control-Key": "holds-par", "Svc-Flow-Control-Value": "parallelism=1" });
    expect(await holdOfKind(waiting, "flow-control")).toMatchObject({
      key: "holds-par", reason: "parallelism", inFlight: 1, parallelism: 1, until: null, ahead: 0,
    });

    await publish("/keyed", { "Svc-Flow-Control-Key": "holds-paused" });
    expect((await dispatch.api("/v2/flowControl/holds-paused/pause", { method: "POST" })).status).toBe(200);
    const paused = await publish("/keyed", { "Svc-Flow-Control-Key": "holds-paused" });
    expect(await holdOfKind(paused, "flow-control")).toMatchObject({ key: "holds-paused", reason: "paused" });

    const rated = { "Svc-Flow-Control-Key": "holds-rate", "Svc-Flow-Control-Value": "rate=1, period=1h" };
    await holdOfKind(await publish("/keyed", rated), "finished");
    const throttled = await holdOfKind(await publish("/keyed", rated), "flow-control");
    expect(throttled).toMatchObject({ key: "holds-rate", reason: "rate", startedInWindow: 1, rate: 1, periodMs: 3_600_000 });
    expect(throttled.until!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
  });

  it("counts the messages ahead in a destination's line in the order they fell due, then were published", async () => {
    expect((await dispatch.api(`/v2/destinations/${closed.url}/open`, { method: "POST" })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await dispatch.api(`/v2/publish/${closed.url}/line/${i}`, { method: "POST", body: "{}" });
      ids.push((await response.json()).messageId);
    }
    for (const id of ids) await holdOfKind(id, "destination");
    // Retries recorded by one statement fall due at the same instant: publish order breaks the tie.
    await dispatch.service.sql`update dispatch.messages set next_delivery_at = now() - interval '1 minute' where id in ${dispatch.service.sql(ids)}`;
    const aheads = await Promise.all(ids.map(async (id) => (await holdOfKind(id, "destination")).ahead));
    expect(aheads).toEqual([0, 1, 2]);
    const [probe] = await dispatch.service.sql<{ id: string }[]>`
      select id from dispatch.messages where destination = ${closed.url} and destination_parked order by next_delivery_at, seq limit 1`;
    expect(probe!.id).toBe(ids[0]);
  });

  it("says a message is due and waits for a worker when none runs", async () => {
    const api = await startTestService({}, { role: "api" });
    try {
      const response = await api.api(`/v2/publish/${receiver.url}/nobody`, { method: "POST", body: "{}" });
      const { messageId } = await response.json();
      const found = await holdIn(api.service.sql, messageId);
      expect(found.kind).toBe("due");
    } finally {
      await api.stop();
    }
  });
});
