/**
 * The claim serves projects in turn: project acme's backlog of 20,000 due
 * messages (to eight slow destinations, each with room to take them) does
 * not hold back the default project's 20 new messages, which arrive while
 * most of the backlog still waits. Served in publish order instead, they
 * would wait for the whole backlog (at most 16 deliveries of 100 ms in
 * flight: over two minutes). Counts, not times, tell the two apart. With a
 * second worker process beside the first (a replica), each one's claim takes
 * projects in turn, and the new messages still go beside the backlog.
 */
import { expect, it } from "vitest";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { type Receiver, useReceiver } from "../support/receiver";
import { startTestService, useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const slow = Array.from({ length: 8 }, () => useReceiver(() => ({ status: 200, delayMs: 100 })));
const fresh = useReceiver();

const BACKLOG = 20_000;
const BATCH = 1000;
const delivered = (receivers: Receiver[]) => receivers.reduce((n, receiver) => n + receiver.requests.length, 0);

/** Publishes `count` of acme's messages, spread over the slow receivers, and checks more than half of them still wait. */
async function publishBacklog(count: number): Promise<void> {
  for (let start = 0; start < count; start += BATCH) {
    const items = Array.from({ length: BATCH }, (_, i) => ({ destination: `${slow[(start + i) % slow.length]!.url}/backlog`, body: "b" }));
    const response = await acme.api("/v2/batch", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(items) });
    // Read to the end: an answer left unread holds its connection open, and the service's stop waits for it.
    expect([response.status, (await response.json()).length]).toEqual([200, BATCH]);
  }
  expect(await waiting()).toBeGreaterThan(count / 2);
}

const waiting = async () => {
  const [backlog] = await dispatch.service.sql<{ n: number }[]>`
    select count(*)::int as n from dispatch.messages where project = 'acme' and state in ('CREATED', 'RETRY')`;
  return backlog!.n;
};

/** Publishes the default project's 20 new messages and waits for them all to arrive at `fresh`. */
async function freshArrive(): Promise<void> {
  const before = fresh.requests.length;
  const items = Array.from({ length: 20 }, (_, i) => ({ destination: `${fresh.url}/new-${i}`, body: "n" }));
  const response = await dispatch.api("/v2/batch", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(items) });
  expect([response.status, (await response.json()).length]).toEqual([200, 20]);
  await poll(() => fresh.requests.length === before + 20, () => `the default project's 20 messages (${fresh.requests.length - before} arrived; ${delivered(slow)} of acme's)`, 60_000);
}

it("delivers another project's new messages while one project's 20,000-message backlog waits", async () => {
  await publishBacklog(BACKLOG);
  await freshArrive();
  // acme's backlog was served beside them, not before them: most of it still waits.
  expect(delivered(slow)).toBeLessThan(BACKLOG / 2);
}, 120_000);

it("still delivers them beside the backlog with a second worker process claiming too", async () => {
  const replica = await startTestService({}, { role: "worker", databaseUrl: dispatch.service.databaseUrl });
  try {
    // Both processes claim acme's backlog before the new messages come.
    const claimers = async () => (await dispatch.service.sql<{ n: number }[]>`select count(distinct worker_id)::int as n from dispatch.claims`)[0]!.n;
    await poll(async () => (await claimers()) === 2, "both workers to hold claims");
    const left = await waiting();
    await freshArrive();
    // The rest of the backlog was not served first: most of it still waits.
    expect(await waiting()).toBeGreaterThan(left / 2);
  } finally {
    await replica.stop();
  }
}, 120_000);
