/**
 * Delivering from the publishing process (domain/publish/local-delivery.ts):
 * a process running both roles stores an immediate message already claimed
 * by its own worker and attempts it at once; everything else still goes
 * through the work list; a process killed with such messages in flight loses
 * none of them; and local publishes never starve the work list.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../src/config/config";
import { insertMessagesClaiming } from "../src/domain/publish/insert";
import { messageSettings } from "../src/domain/publish/options";
import { DestinationGuard } from "../src/outbound/destination-guard";
import { prepareMessages } from "../src/domain/publish/prepare";
import { cloneDatabase } from "./support/database";
import { poll } from "./support/poll";
import { type DispatchProcess, killAllDispatchProcesses, startDispatchProcess } from "./support/processes";
import { type Receiver, startReceiver } from "./support/receiver";
import { eventStates, messageState, storedClaims } from "./support/rows";
import { startTestService, TEST_TOKEN, type TestService } from "./support/service";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";

let databaseUrl: string;
let receiver: Receiver;
const services: TestService[] = [];
/** Releases requests the receiver is holding open, so no handler outlives the test. */
let releaseHeld: () => void = () => {};

beforeEach(async () => {
  databaseUrl = await cloneDatabase();
  receiver = await startReceiver();
});

afterEach(async () => {
  releaseHeld();
  await killAllDispatchProcesses();
  await Promise.all(services.splice(0).map((service) => service.stop()));
  await receiver.close();
});

async function start(overrides: Partial<Config> = {}, role: "all" | "api" = "all"): Promise<TestService> {
  const service = await startTestService(overrides, { role, databaseUrl });
  services.push(service);
  return service;
}

/** The value of a counter without labels in a `/metrics` answer. */
async function counter(baseUrl: string, name: string): Promise<number> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
  const line = (await response.text()).split("\n").find((text) => text.startsWith(`${name} `));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}

const CLAIMED_AT_PUBLISH = "dispatch_messages_claimed_at_publish_total";

async function publish(service: { baseUrl: string }, path: string, headers: Record<string, string> = {}, body = "hello"): Promise<string> {
  const response = await fetch(`${service.baseUrl}/v2/publish/${receiver.url}/${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TEST_TOKEN}`, ...headers },
    body,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messageId: string }).messageId;
}

describe("delivering from the publishing process", () => {
  it("attempts an immediate message it stored claimed, and sends the rest through the work list", async () => {
    const dispatch = await start();
    // A worker lends no slot before its first claim has found the work list empty (on a busy machine, after the start).
    const local = dispatch.service.localDelivery!;
    await poll(() => local.reserve(1) === 1, "the worker to lend a slot");
    local.deliver([], 1);
    const immediate = await publish(dispatch, "immediate", { "Content-Type": "application/octet-stream" }, "\u0000\u00ff bytes");
    const [arrived] = await receiver.waitFor(1);
    expect(arrived!.headers["svc-message-id"]).toBe(immediate);
    expect(arrived!.body).toEqual(Buffer.from("\u0000\u00ff bytes"));
    await poll(async () => (await messageState(dispatch, immediate)) === "DELIVERED", "the immediate message to be DELIVERED");
    expect(await counter(dispatch.baseUrl, CLAIMED_AT_PUBLISH)).toBe(1);

    // Each of these is held by something the work list decides: none is claimed at publish.
    const held = [
      await publish(dispatch, "delayed", { "Svc-Delay": "1s" }),
      await publish(dispatch, "keyed", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "parallelism=1" }),
      await publish(dispatch, "deduplicated", { "Svc-Deduplication-Id": "once" }),
    ];
    const queued = await fetch(`${dispatch.baseUrl}/v2/enqueue/q/${receiver.url}/queued`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TEST_TOKEN}` },
      body: "queued",
    });
    held.push(((await queued.json()) as { messageId: string }).messageId);
    await receiver.waitFor(5);
    await poll(async () => (await Promise.all(held.map((id) => messageState(dispatch, id)))).every((state) => state === "DELIVERED"), "every held message to be DELIVERED");
    expect(await counter(dispatch.baseUrl, CLAIMED_AT_PUBLISH)).toBe(1);
    expect(await eventStates(dispatch, immediate)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
    // The claim the publish registered was dropped once its attempt was recorded.
    await poll(async () => (await storedClaims(dispatch)).length === 0, "the publish's claim to be dropped");
  });

  it("is off with DISPATCH_DELIVER_FROM_PUBLISH=false", async () => {
    const dispatch = await start({ deliverFromPublish: false });
    const id = await publish(dispatch, "through-the-work-list");
    await receiver.waitFor(1);
    await poll(async () => (await messageState(dispatch, id)) === "DELIVERED", "the message to be DELIVERED");
    expect(await counter(dispatch.baseUrl, CLAIMED_AT_PUBLISH)).toBe(0);
  });

  it("loses nothing a SIGKILLed process stored claimed: the sweep puts it back and another worker delivers it", async () => {
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    // The first request to each path is held open: the process that sent it is the one killed.
    receiver.respond(async (request) => {
      if (receiver.requests.filter((r) => r.path === request.path).length === 1) await held;
      return { status: 200, body: "ok" };
    });
    const env = {
      DATABASE_URL: databaseUrl,
      DISPATCH_TOKEN: TEST_TOKEN,
      DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
      DISPATCH_HEARTBEAT_INTERVAL: "1s",
      DISPATCH_WORKER_DEAD_AFTER: "3s",
    };
    const victim = await startDispatchProcess("all", env);
    const victimUrl = baseUrlOf(victim);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await publish({ baseUrl: victimUrl }, `held-${i}`, { "Svc-Timeout": "60s" }));
    await receiver.waitFor(5);
    // Each is in flight in the victim: stored claimed at publish, or (when the victim's claim loop had just been
    // woken, and so lent no slot to the insert) claimed by that loop a moment later. Both are claims it dies with.
    expect(await counter(victimUrl, CLAIMED_AT_PUBLISH)).toBeGreaterThanOrEqual(1);
    await victim.kill();

    const reader = await start({}, "api");
    await startDispatchProcess("worker", env);
    await poll(
      async () => (await Promise.all(ids.map((id) => messageState(reader, id)))).every((state) => state === "DELIVERED"),
      async () => `states ${(await Promise.all(ids.map((id) => messageState(reader, id)))).join(", ")}`,
      30_000,
    );
    // Each arrived twice (the killed process's attempt, then the survivor's) and was recorded once.
    expect(receiver.requests).toHaveLength(10);
    for (const id of ids) expect((await eventStates(reader, id)).filter((state) => state === "DELIVERED")).toHaveLength(1);
  }, 90_000);

  it("never starves the work list: a delayed message comes through while immediate publishes keep every slot busy", async () => {
    receiver.respond(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { status: 200, body: "ok" };
    });
    const dispatch = await start({ workerConcurrency: 4 });
    const local = dispatch.service.localDelivery!;
    // The worker never lends its last slots (a sixteenth of them, at least one): the work list keeps them.
    await poll(() => local.reserve(1) === 1, "the worker to lend a slot");
    local.deliver([], 1);
    expect(local.reserve(100)).toBe(3);
    local.deliver([], 3);
    const delayed = await publish(dispatch, "delayed", { "Svc-Delay": "1s" });
    let published = 0;
    const arrivedDelayed = () => receiver.requests.some((request) => request.path === "/delayed");
    const busyArrived = () => receiver.requests.filter((request) => request.path === "/busy").length;
    const deadline = Date.now() + 30_000;
    // Eight publishers keep the worker's four slots full of local attempts until the delayed message
    // arrives. Each waits until at most eight of the busy messages are not yet delivered: publishing
    // faster than the slots deliver would queue them on the work list ahead of the delayed message,
    // which then waits its turn there however fast the host is, and lending would stop anyway.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (!arrivedDelayed() && Date.now() < deadline) {
          published++;
          await publish(dispatch, "busy");
          while (busyArrived() < published - 8 && !arrivedDelayed() && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        }
      }),
    );
    expect(arrivedDelayed()).toBe(true);
    expect(await counter(dispatch.baseUrl, CLAIMED_AT_PUBLISH)).toBeGreaterThan(0);
    await poll(async () => (await messageState(dispatch, delayed)) === "DELIVERED", "the delayed message's outcome to be recorded");
  }, 60_000);

  it("after an insert whose answer was lost, lends nothing and releases the claims it never heard of only once no insert is under way", async () => {
    const dispatch = await start();
    const local = dispatch.service.localDelivery!;
    // The worker lends slots once its first claim found the work list drained.
    await poll(() => local.reserve(1) === 1, "the worker to lend a slot");
    // That reservation is an insert still under way. A second one commits a claimed message, but its answer is lost.
    const lost = await storeClaimed(dispatch, local.workerId, "lost");
    expect(local.reserve(1)).toBe(1);
    local.abandon(1);
    expect(local.reserve(1)).toBe(0);
    // While the first insert is under way, the claim it may have registered is unknown too: nothing is released.
    for (let round = 0; round < 5; round++) await new Promise((resolve) => setTimeout(resolve, dispatch.config.pollIntervalMs));
    expect((await storedClaims(dispatch)).some((claim) => claim.messageIds.includes(lost))).toBe(true);
    expect(await messageState(dispatch, lost)).toBe("CREATED");
    // It ends; the lost claim is released and its message delivered, once.
    local.deliver([], 1);
    await poll(async () => (await messageState(dispatch, lost)) === "DELIVERED", "the lost insert's message to be delivered");
    expect(receiver.requests.filter((request) => request.path === "/lost")).toHaveLength(1);
  });
});

/** Stores one immediate message already claimed by `workerId`, as a publish's insert does; returns its id. */
async function storeClaimed(dispatch: TestService, workerId: string, path: string): Promise<string> {
  const settings = { ...messageSettings(dispatch.config), llmUrl: null, guard: new DestinationGuard(true) };
  const request = { destination: `${receiver.url}/${path}`, headers: {}, body: Buffer.from(path), queueName: null, callerIp: null, project: DEFAULT_PROJECT };
  const { messages } = await prepareMessages(dispatch.service.sql, request, settings);
  const stored = await insertMessagesClaiming(dispatch.service.sql, messages, settings, {
    workerId,
    ids: new Set([messages[0]!.id]),
    byProject: dispatch.service.localDelivery?.claimsByProject ?? false,
  });
  expect(stored.claimed).toHaveLength(1);
  return messages[0]!.id;
}

/** A child process's base URL, from its banner. */
function baseUrlOf(process: DispatchProcess): string {
  const match = /URL:\s+(\S+)/.exec(process.output());
  if (!match) throw new Error(`no URL in the banner:\n${process.output()}`);
  return match[1]!;
}
