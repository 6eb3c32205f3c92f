/**
 * The queue resource: upsert, get, list and delete, enqueueing (which creates
 * a queue on first use), the refusals of bad names and settings, and an
 * unknown queue.
 */
import { describe, expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { DEFAULT_PROJECT } from "../../src/db/vocabulary";
import { engineCycle, expectUntouched } from "../support/engine";
import { waitingOnLocks } from "../support/locks";
import { poll } from "../support/poll";
import { sleep } from "../support/receiver";
import { countMessages } from "../support/rows";
import { useDispatch } from "../support/service";
import { useReceivers } from "../support/receiver";
import { enqueue, queueApi } from "./fixtures";

const dispatch = useDispatch();
const receiver = useReceivers();
const { upsert, getQueue, stateOf } = queueApi(dispatch);

describe("the queue resource", () => {
  it("enqueue creates the queue on first use (parallelism 1, active) and delivers through it", async () => {
    const target = await receiver();
    expect((await dispatch.api("/v2/queues/auto-created")).status).toBe(404);
    const before = Date.now();
    const result = await enqueue(dispatch, "auto-created", `${target.url}/q?a=1`, 1);
    expect(result.messageId).toMatch(/^msg_/);
    expect(result.url).toBe(`${target.url}/q?a=1`);
    expect(result.deduplicated).toBe(false);

    const [got] = await target.waitFor(1);
    expect(got!.path).toBe("/q?a=1");
    expect(got!.body.toString()).toBe('{"n":1}');
    expect(got!.headers["svc-message-id"]).toBe(result.messageId);

    const queue = await getQueue("auto-created");
    expect(Object.keys(queue).sort()).toEqual(["createdAt", "lag", "name", "parallelism", "paused", "updatedAt"]);
    expect(queue).toMatchObject({ name: "auto-created", parallelism: 1, paused: false });
    expect(queue.createdAt).toBeGreaterThanOrEqual(before - 5000);
    expect(queue.updatedAt).toBeGreaterThanOrEqual(queue.createdAt);
    await poll(async () => (await getQueue("auto-created")).lag === 0, () => "lag did not drop to 0");
    const message = await (await dispatch.api(`/v2/messages/${result.messageId}`)).json();
    expect(message.queueName).toBe("auto-created");
  });

  it("POST /v2/queues upserts parallelism and paused; get and list show them", async () => {
    await upsert("upserted", 4, true);
    const created = await getQueue("upserted");
    expect(created).toMatchObject({ name: "upserted", parallelism: 4, paused: true, lag: 0 });

    await sleep(20);
    await upsert("upserted", 2, false);
    const updated = await getQueue("upserted");
    expect(updated).toMatchObject({ name: "upserted", parallelism: 2, paused: false, lag: 0 });
    expect(updated.createdAt).toBe(created.createdAt);
    expect(updated.updatedAt).toBeGreaterThan(created.updatedAt);

    // The SDK always sends all three fields; parallelism and paused default to 1 and false.
    const minimal = await dispatch.api("/v2/queues", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ queueName: "minimal" }),
    });
    expect(minimal.status).toBe(200);
    expect(await getQueue("minimal")).toMatchObject({ parallelism: 1, paused: false });

    const list = await dispatch.api("/v2/queues");
    expect(list.status).toBe(200);
    const queues = await list.json();
    expect(Array.isArray(queues)).toBe(true);
    const listed = queues.find((q: { name: string }) => q.name === "upserted");
    expect(listed).toEqual(await getQueue("upserted"));
    expect(queues.map((q: { name: string }) => q.name)).toEqual(expect.arrayContaining(["upserted", "minimal"]));
  });

  it("invalid upserts and invalid queue names are 400 and create nothing", async () => {
    const bodies = [
      { queueName: "bad name", parallelism: 1, paused: false },
      { queueName: "bad/name", parallelism: 1, paused: false },
      { queueName: "ok-name", parallelism: -1, paused: false },
      { queueName: "ok-name", parallelism: 1.5, paused: false },
      { queueName: "ok-name", parallelism: 1, paused: "yes" },
      { parallelism: 1 },
    ];
    for (const body of bodies) {
      const response = await dispatch.api("/v2/queues", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(typeof (await response.json()).error).toBe("string");
    }
    expect((await dispatch.api("/v2/queues/ok-name")).status).toBe(404);

    const target = await receiver();
    const bad = await dispatch.api(`/v2/enqueue/bad$queue/${target.url}/x`, { method: "POST", body: "{}" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/queue name/);
    expect(await countMessages(dispatch, { queueName: "bad$queue" })).toBe(0);
  });

  it("an unknown queue is 404 for get, pause and resume; deleting it changes nothing (200)", async () => {
    expect((await dispatch.api("/v2/queues/nope", { method: "DELETE" })).status).toBe(200);
    for (const [method, path] of [
      ["GET", "/v2/queues/nope"],
      ["POST", "/v2/queues/nope/pause"],
      ["POST", "/v2/queues/nope/resume"],
    ] as const) {
      const response = await dispatch.api(path, { method });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await response.json()).error).toMatch(/nope/);
    }
    // Pausing an unknown queue does not create it.
    expect((await dispatch.api("/v2/queues/nope")).status).toBe(404);
  });

  it("deleting a queue cancels its waiting messages; none is ever delivered", async () => {
    const target = await receiver();
    await upsert("to-delete", 1, true);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await enqueue(dispatch, "to-delete", `${target.url}/d`, n)).messageId);
    expect((await getQueue("to-delete")).lag).toBe(3);

    const deleted = await dispatch.api("/v2/queues/to-delete", { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect((await dispatch.api("/v2/queues/to-delete")).status).toBe(404);
    const names = (await (await dispatch.api("/v2/queues")).json()).map((q: { name: string }) => q.name);
    expect(names).not.toContain("to-delete");
    for (const id of ids) expect(await stateOf(id)).toBe("CANCELED");

    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(0);
    await expectUntouched(dispatch, ids);
    // The name can be used again, as a new empty queue.
    await enqueue(dispatch, "to-delete", `${target.url}/again`, 9);
    const [got] = await target.waitFor(1);
    expect(got!.path).toBe("/again");
  });

  it("deleting a queue beside a transaction that holds one of its messages, then its queue, waits for it: no deadlock", async () => {
    // What a worker recording an outcome does: its message's lock, then the queue's (to start the next).
    const target = await receiver();
    await upsert("contended", 1, true);
    const { messageId } = await enqueue(dispatch, "contended", `${target.url}/c`, 1);
    const worker = createSql(dispatch.config.databaseUrl!, 1);
    const observer = createSql(dispatch.config.databaseUrl!, 1);
    try {
      let deleted: Promise<Response> | undefined;
      await worker.begin(async (tx) => {
        await tx`select id from dispatch.messages where id = ${messageId} for update`;
        deleted = dispatch.api("/v2/queues/contended", { method: "DELETE" });
        // The delete is under way (waiting for this message) before this transaction asks for the queue.
        await poll(async () => (await waitingOnLocks(observer)) >= 1, "the delete waiting for a lock this transaction holds");
        await tx`select name from dispatch.queues where project = ${DEFAULT_PROJECT} and name = 'contended' for update`;
      });
      expect((await deleted!).status).toBe(200);
    } finally {
      await Promise.all([worker.end(), observer.end()]);
    }
    expect((await dispatch.api("/v2/queues/contended")).status).toBe(404);
    expect(await stateOf(messageId)).toBe("CANCELED");
  });
});
