/**
 * One destination that hangs, or answers slowly, holds its share of a
 * worker's delivery slots and no more: messages to every other destination
 * keep arriving at once (the claim parks the blocked backlog in its
 * destination's line instead of reading it again), in one worker and across
 * two worker processes sharing one database.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cloneDatabase } from "../support/database";
import { poll } from "../support/poll";
import { killAllDispatchProcesses, startDispatchProcess } from "../support/processes";
import { type Receiver, receiverPool, type Responder, sleep } from "../support/receiver";
import { servicePool, TEST_TOKEN, type TestService } from "../support/service";

/** Slots of each worker here, and the share one destination may hold (DISPATCH_DESTINATION_SHARE's default, 0.25). */
const CONCURRENCY = 32;
const SHARE = 8;

const receivers = receiverPool();
const services = servicePool();

afterEach(async () => {
  await receivers.closeAll();
  await killAllDispatchProcesses();
  await services.stopAll();
});

const receiver = (responder?: Responder) => receivers.start(responder);
const service = (...args: Parameters<typeof services.start>) => services.start(...args);

/** Publishes `count` messages to `url` in batches of 100. */
async function publishMany(dispatch: TestService, url: string, count: number): Promise<void> {
  for (let sent = 0; sent < count; sent += 100) {
    const items = Array.from({ length: Math.min(100, count - sent) }, (_, i) => ({ destination: `${url}/backlog/${sent + i}`, body: "x" }));
    const response = await dispatch.api("/v2/batch", { method: "POST", body: JSON.stringify(items) });
    expect(response.status).toBe(200);
  }
}

/**
 * Publishes 20 messages to `healthy`, one every 100 ms, and returns how long
 * each took from its publish to its arrival.
 */
async function healthyLatencies(dispatch: TestService, healthy: Receiver): Promise<number[]> {
  const sentAt: number[] = [];
  for (let i = 0; i < 20; i++) {
    sentAt.push(Date.now());
    const response = await dispatch.api(`/v2/publish/${healthy.url}/healthy/${i}`, { method: "POST", body: String(i) });
    expect(response.status).toBe(200);
    await sleep(100);
  }
  await healthy.waitFor(20, 30_000);
  return healthy.requests.map((request) => request.at - sentAt[Number(request.path.split("/").pop())]!);
}

describe("a destination that hangs or answers slowly", () => {
  it("holds its share of the slots; every message to a healthy destination arrives within 2 s of its publish", async () => {
    const dispatch = await service({ workerConcurrency: CONCURRENCY });
    const hanging = await receiver(() => new Promise(() => {}));
    const healthy = await receiver();
    await publishMany(dispatch, hanging.url, 300);
    await poll(() => hanging.requests.length >= SHARE, `the hanging destination holds ${SHARE} slots`);
    const latencies = await healthyLatencies(dispatch, healthy);
    expect(Math.max(...latencies)).toBeLessThan(2000);
    expect(hanging.requests).toHaveLength(SHARE);
    // The rest of its backlog waits in its line, not on the work list.
    const [row] = await dispatch.service.sql<{ parked: number; due: number }[]>`
      select count(*) filter (where destination_parked)::int as parked, count(*) filter (where due_at is not null)::int as due
      from dispatch.messages where destination = ${hanging.url}`;
    expect(row).toEqual({ parked: 300 - SHARE, due: 0 });
  });

  it("answering after 10 s, it holds its share; a healthy destination's messages arrive within 2 s", async () => {
    const dispatch = await service({ workerConcurrency: CONCURRENCY });
    let answering = 0;
    let most = 0;
    const slow = await receiver(async () => {
      most = Math.max(most, ++answering);
      await sleep(10_000);
      answering--;
      return { status: 200 };
    });
    const healthy = await receiver();
    await publishMany(dispatch, slow.url, 300);
    await poll(() => slow.requests.length >= SHARE, `the slow destination holds ${SHARE} slots`);
    const latencies = await healthyLatencies(dispatch, healthy);
    expect(Math.max(...latencies)).toBeLessThan(2000);
    // Its answers may come back meanwhile (on a busy machine the test outlasts them): never more than its share at once.
    expect(most).toBe(SHARE);
  });

  it("across two worker processes on one database, each holds at most its share for it", async () => {
    const databaseUrl = await cloneDatabase();
    const api = await service({}, { role: "api", databaseUrl });
    const env = {
      DATABASE_URL: databaseUrl,
      DISPATCH_TOKEN: TEST_TOKEN,
      DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
      DISPATCH_WORKER_CONCURRENCY: String(CONCURRENCY),
      DISPATCH_HEARTBEAT_INTERVAL: "1s",
      DISPATCH_WORKER_DEAD_AFTER: "3s",
    };
    await startDispatchProcess("worker", env);
    await startDispatchProcess("worker", env);
    const hanging = await receiver(() => new Promise(() => {}));
    const healthy = await receiver();
    await publishMany(api, hanging.url, 300);
    await poll(() => hanging.requests.length >= 2 * SHARE, `the hanging destination holds ${SHARE} slots in each worker`);
    const latencies = await healthyLatencies(api, healthy);
    expect(Math.max(...latencies)).toBeLessThan(2000);
    expect(hanging.requests).toHaveLength(2 * SHARE);
  });

  it("with polling once a minute, what waits for a destination's room goes as its slots free, and a closed circuit's line at once", async () => {
    // Nothing is found by the poll within the test: every claim is woken by a freed slot or a NOTIFY.
    const dispatch = await service({ workerConcurrency: CONCURRENCY, pollIntervalMs: 60_000 });
    const target = await receiver(() => ({ status: 200, delayMs: 20 }));
    await publishMany(dispatch, target.url, 200);
    await target.waitFor(200, 15_000);

    const origin = encodeURIComponent(target.url);
    expect((await dispatch.api(`/v2/destinations/${origin}/open`, { method: "POST" })).status).toBe(200);
    await publishMany(dispatch, target.url, 20);
    await sleep(500);
    expect(target.requests).toHaveLength(200);
    expect((await dispatch.api(`/v2/destinations/${origin}/close`, { method: "POST" })).status).toBe(200);
    await target.waitFor(220, 10_000);
  });
});
