/**
 * Delivery is at-least-once: a worker process killed mid-delivery loses
 * nothing, and messages accepted while no worker runs are delivered once one
 * does. Workers run as real child processes so they can be SIGKILLed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cloneDatabase } from "./support/database";
import { poll } from "./support/poll";
import { type DispatchProcess, killAllDispatchProcesses, startDispatchProcess } from "./support/processes";
import { type Receiver, startReceiver } from "./support/receiver";
import { countMessages, eventStates, messageState, storedClaims, storedMessage, storedWorkers } from "./support/rows";
import { startTestService, TEST_TOKEN, type TestService } from "./support/service";

let databaseUrl: string;
let dispatch: TestService | null = null;
let receiver: Receiver | null = null;
/** Releases requests the receiver is holding open, so no handler outlives the test. */
let releaseHeld: () => void = () => {};

beforeEach(async () => {
  databaseUrl = await cloneDatabase();
  dispatch = await startTestService({}, { role: "api", databaseUrl });
  receiver = await startReceiver();
});

afterEach(async () => {
  releaseHeld();
  await killAllDispatchProcesses();
  await dispatch?.stop();
  await receiver?.close();
  dispatch = null;
  receiver = null;
});

function startWorker(): Promise<DispatchProcess> {
  return startDispatchProcess("worker", {
    DATABASE_URL: databaseUrl,
    DISPATCH_TOKEN: TEST_TOKEN,
    DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
    DISPATCH_HEARTBEAT_INTERVAL: "1s",
    DISPATCH_WORKER_DEAD_AFTER: "3s",
    DISPATCH_WORKER_CONCURRENCY: "8",
    // The victim holds six requests to one receiver open: the whole worker is that destination's.
    DISPATCH_DESTINATION_SHARE: "1",
    DISPATCH_RETRY_DELAY_SCALE: "0.001",
  });
}

async function publish(headers: Record<string, string> = {}, body = '{"hello":"world"}'): Promise<string> {
  const response = await dispatch!.api(`/v2/publish/${receiver!.url}/hook`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messageId: string }).messageId;
}

async function stateOf(messageId: string): Promise<string> {
  const response = await dispatch!.api(`/v2/messages/${messageId}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { state: string }).state;
}

describe("crash recovery", () => {
  it("a worker process killed mid-delivery loses nothing: the message is delivered once a worker runs again", async () => {
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    // The first request is never answered (until the test ends); later ones get 200.
    receiver!.respond(async (_request, index) => {
      if (index === 0) await held;
      return { status: 200, body: "ok" };
    });
    const first = await startWorker();
    const messageId = await publish({ "Svc-Timeout": "60s" });

    const [inFlight] = await receiver!.waitFor(1, 20_000);
    expect(inFlight!.headers["svc-message-id"]).toBe(messageId);
    await first.kill();
    const killedAt = Date.now();
    expect(first.child.signalCode).toBe("SIGKILL");
    // Nothing was recorded for the interrupted attempt, and the message is still claimed by a
    // worker the dead process registered: only the liveness sweep can put it back.
    expect(await stateOf(messageId)).toBe("CREATED");
    const sql = dispatch!.service.sql;
    // Read apart: on Citus the claims are on the nodes and the heartbeats on the coordinator.
    const claims = await sql<{ messageIds: string[]; workerId: string }[]>`
      select message_ids as "messageIds", worker_id as "workerId" from dispatch.claims`;
    const workers = await sql<{ id: string }[]>`select id from dispatch.workers`;
    const [message] = await sql<{ due: Date | null }[]>`select due_at as due from dispatch.messages where id = ${messageId}`;
    expect(claims).toHaveLength(1);
    expect(claims[0]!.messageIds).toEqual([messageId]);
    expect(workers.map((worker) => worker.id)).toContain(claims[0]!.workerId);
    expect(message!.due).toBeNull();

    const second = await startWorker();
    const requests = await receiver!.waitFor(2, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}\nsecond worker output:\n${second.output()}`);
    });
    const recoveredAfterMs = Date.now() - killedAt;
    expect(requests[1]!.headers["svc-message-id"]).toBe(messageId);
    expect(requests[1]!.body.toString()).toBe('{"hello":"world"}');

    await poll(
      async () => (await stateOf(messageId)) === "DELIVERED",
      async () => `state is ${await stateOf(messageId)}\nsecond worker output:\n${second.output()}`,
    );
    expect(await messageState(dispatch!, messageId)).toBe("DELIVERED");
    const states = await eventStates(dispatch!, messageId);
    expect(states.at(-1)).toBe("DELIVERED");
    expect(states.filter((state) => state === "DELIVERED")).toHaveLength(1);
    // The work is done: the message is off the work list and its claims are dropped (the live worker's
    // at its next heartbeat).
    const claimCount = async () => (await storedClaims(dispatch!)).length;
    await poll(async () => (await claimCount()) === 0, async () => `${await claimCount()} claims left`);
    const due = await storedMessage(dispatch!, messageId);
    expect(due!.dueAt).toBeNull();
    console.log(`crash recovery: redelivered ${recoveredAfterMs} ms after the SIGKILL (events: ${states.join(" → ")})`);
  }, 90_000);

  it("with two workers, the survivor redelivers what a SIGKILLed worker had in flight", async () => {
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    // The first request to each path is held open: the worker that sent it is the one killed.
    receiver!.respond(async (request) => {
      if (receiver!.requests.filter((r) => r.path === request.path).length === 1) await held;
      return { status: 200, body: "ok" };
    });
    const victim = await startWorker();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await dispatch!.api(`/v2/publish/${receiver!.url}/held-${i}`, {
        method: "POST",
        headers: { "Svc-Timeout": "60s" },
        body: `held ${i}`,
      });
      ids.push(((await response.json()) as { messageId: string }).messageId);
    }
    await receiver!.waitFor(6, 20_000);
    const survivor = await startWorker();
    await victim.kill();
    const killedAt = Date.now();
    await poll(
      async () => (await Promise.all(ids.map(stateOf))).every((state) => state === "DELIVERED"),
      async () =>
        `states ${(await Promise.all(ids.map(stateOf))).join(",")} at ${new Date().toISOString()} claims ${JSON.stringify(
          await storedClaims(dispatch!),
        )} workers ${JSON.stringify(await storedWorkers(dispatch!))}\nsurvivor:\n${survivor.output()}`,
      30_000,
    );
    const redeliveredAfterMs = Date.now() - killedAt;
    // Each message arrived exactly twice: once to the killed worker, once from the survivor.
    expect(receiver!.requests).toHaveLength(12);
    expect(await countMessages(dispatch!, { ids, due: true })).toBe(0);
    console.log(`two workers: the survivor delivered all ${ids.length} messages ${redeliveredAfterMs} ms after the SIGKILL`);
  }, 90_000);

  it("messages accepted while no worker runs are all delivered once a worker starts", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await publish({}, JSON.stringify({ n: i })));
    expect(new Set(ids).size).toBe(20);
    // API only: nothing is delivered yet.
    expect(receiver!.requests).toHaveLength(0);
    expect(await countMessages(dispatch!, { ids, states: ["CREATED"] })).toBe(20);

    const worker = await startWorker();
    await receiver!.waitFor(20, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}\nworker output:\n${worker.output()}`);
    });
    await poll(
      async () => {
        const received = new Set(receiver!.requests.map((request) => request.headers["svc-message-id"] as string));
        const delivered = await countMessages(dispatch!, { ids, states: ["DELIVERED"] });
        return received.size === 20 && delivered === 20;
      },
      async () => `received ${receiver!.requests.length} requests\nworker output:\n${worker.output()}`,
    );
    const received = new Set(receiver!.requests.map((request) => request.headers["svc-message-id"] as string));
    expect([...received].sort()).toEqual([...ids].sort());
  }, 90_000);
});
