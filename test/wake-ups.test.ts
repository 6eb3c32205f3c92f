/**
 * An idle worker sleeps until the next due time it knows of, not a poll
 * interval at a time: a claim that found nothing asks the work list when its
 * next message comes due, and writers announce what they make due (a NOTIFY
 * whose payload says in how many ms). Here the worker's polls wait ten
 * minutes, so only those wake-ups can deliver what the tests wait for.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../src/config/config";
import { createSql } from "../src/db/client";
import { WakeableLoop } from "../src/worker/wakeable-loop";
import { cloneDatabase } from "./support/database";
import { poll } from "./support/poll";
import { type Receiver, startReceiver } from "./support/receiver";
import { type ServiceOptions, startTestService, type TestService } from "./support/service";

/** Polls that never come within a test: what is delivered was woken for. */
const NO_POLL: Partial<Config> = { pollIntervalMs: 600_000, idlePollIntervalMs: 600_000 };

let databaseUrl: string;
let receiver: Receiver;
const services: TestService[] = [];

beforeEach(async () => {
  databaseUrl = await cloneDatabase();
  receiver = await startReceiver();
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.stop()));
  await receiver.close();
});

async function start(overrides: Partial<Config>, role: ServiceOptions["role"]): Promise<TestService> {
  const service = await startTestService(overrides, { role, databaseUrl });
  services.push(service);
  return service;
}

/** Publishes `path` to the receiver with `headers` (a delay, a Not-Before); returns the message's id. */
async function publish(service: TestService, path: string, headers: Record<string, string>): Promise<string> {
  const response = await service.api(`/v2/publish/${receiver.url}/${path}`, { method: "POST", headers, body: path });
  expect(response.status).toBe(200);
  return (await response.json()).messageId;
}

/** Resolves once the worker of `service` has claimed and found the work list drained (it lends a slot then). */
async function claimedOnce(service: TestService): Promise<void> {
  const local = service.service.localDelivery!;
  await poll(() => local.reserve(1) === 1, "the worker's first claim");
  local.deliver([], 1);
}

describe("an idle worker", () => {
  it("wakes when a delayed message another process stored comes due (the publish's NOTIFY names when)", async () => {
    const worker = await start(NO_POLL, "all");
    await claimedOnce(worker);
    const api = await start({}, "api");
    const id = await publish(api, "announced", { "Upstash-Delay": "1s" });
    const [delivered] = await receiver.waitFor(1, 20_000);
    expect(delivered!.headers["upstash-message-id"]).toBe(id);
  });

  it("wakes for a delayed message stored before it started (its empty claim asks when the next one is due)", async () => {
    const api = await start({}, "api");
    // Due a second apart however long the publishes take (Not-Before is in whole seconds).
    const soonerAt = Math.ceil(Date.now() / 1000) + 2;
    const due = new Map([
      [await publish(api, "later", { "Upstash-Not-Before": String(soonerAt + 1) }), soonerAt + 1],
      [await publish(api, "sooner", { "Upstash-Not-Before": String(soonerAt) }), soonerAt],
    ]);
    await start(NO_POLL, "worker");
    const arrived = await receiver.waitFor(2, 20_000);
    expect(new Set(arrived.map((request) => request.headers["upstash-message-id"]))).toEqual(new Set(due.keys()));
    // Each when it came due, not before: a worker that starts late on a busy machine may find both due at once.
    for (const request of arrived) expect(request.at).toBeGreaterThanOrEqual(due.get(request.headers["upstash-message-id"] as string)! * 1000);
  });

  it("wakes for a message a dead worker's claim held, once its sweep puts it back", async () => {
    const api = await start({}, "api");
    const id = await publish(api, "orphaned", { "Upstash-Delay": "1h" });
    // As a worker that died mid-attempt leaves it: claimed an hour ago by a process that never beat a heartbeat.
    const sql = createSql(databaseUrl, 1);
    try {
      await sql.begin(async (tx) => {
        const [claim] = await tx<{ id: number }[]>`
          insert into dispatch.claims (worker_id, message_ids, claimed_at) values ('proc_dead:claims', ${[id]}, now() - interval '1 hour')
          returning id`;
        await tx`update dispatch.messages set due_at = null, claim_id = ${claim!.id} where id = ${id}`;
      });
    } finally {
      await sql.end();
    }
    await start({ ...NO_POLL, heartbeatIntervalMs: 100, workerDeadAfterMs: 500 }, "worker");
    const [delivered] = await receiver.waitFor(1, 20_000);
    expect(delivered!.headers["upstash-message-id"]).toBe(id);
  });
});

describe("the wake-up loop", () => {
  it("runs a round at each time it was given, however many, while its rounds ask to sleep for ten minutes", async () => {
    const listener = { listen: async () => ({ unlisten: async () => {} }) };
    const loop = new WakeableLoop(listener as never, "test_channel");
    let rounds = 0;
    await loop.start(async () => (rounds++, 600_000));
    try {
      await poll(() => rounds === 1, "the first round");
      const now = Date.now();
      // The later one first: each time given is kept, not only the earliest.
      loop.wakeAt(now + 120);
      loop.wakeAt(now + 60);
      await poll(() => rounds >= 3, "a round at each time given", 5_000, 10);
      expect(rounds).toBe(3);
    } finally {
      await loop.stop();
    }
  });
});
