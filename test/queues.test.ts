/**
 * Queues: the queue resource (upsert, get, list, delete, pause, resume),
 * enqueueing, pause semantics, bounded parallelism measured at the receiver,
 * and strict FIFO under retries with two worker processes on one database.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cloneDatabase } from "./support/database";
import { engineCycle, expectUntouched } from "./support/engine";
import { poll } from "./support/poll";
import { killAllDispatchProcesses, startDispatchProcess } from "./support/processes";
import { type Receiver, type Reply, type Responder, sleep, startReceiver } from "./support/receiver";
import { attemptsOf, countMessages, storedWorkers } from "./support/rows";
import { startTestService, TEST_TOKEN, type TestService, useDispatch } from "./support/service";

const dispatch = useDispatch();
const receivers: Receiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A receiver of its own for one test, closed after it. */
async function receiver(responder?: Responder): Promise<Receiver> {
  const started = await startReceiver(responder);
  receivers.push(started);
  return started;
}

/**
 * A responder that holds each request `holdMs` before answering `reply(n,
 * attempt)` (n = the `n` of the JSON body, attempt = how many requests for that
 * n came before) and records the most requests it ever held at once.
 */
function tracking(holdMs: number, reply: (n: number, attempt: number) => Reply = () => ({ status: 200 })) {
  const attempts = new Map<number, number>();
  const state = { inFlight: 0, maxInFlight: 0, order: [] as { n: number; status: number }[] };
  const responder: Responder = async (request) => {
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    const n = (JSON.parse(request.body.toString()) as { n: number }).n;
    const attempt = attempts.get(n) ?? 0;
    attempts.set(n, attempt + 1);
    try {
      if (holdMs > 0) await sleep(holdMs);
      const answer = reply(n, attempt);
      state.order.push({ n, status: answer.status ?? 200 });
      return answer;
    } finally {
      // Dispatch cannot start a request that waits on this one before the reply below is written.
      state.inFlight--;
    }
  };
  return { state, responder };
}

const indexesOf = (target: Receiver) => target.requests.map((r) => (JSON.parse(r.body.toString()) as { n: number }).n);

async function enqueue(api: TestService, queue: string, url: string, n: number, headers: Record<string, string> = {}) {
  const response = await api.api(`/v2/enqueue/${queue}/${url}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ n }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { messageId: string; url: string; deduplicated: boolean };
}

async function upsert(queueName: string, parallelism: number, paused = false) {
  const response = await dispatch.api("/v2/queues", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ queueName, parallelism, paused }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

async function getQueue(name: string, api = dispatch) {
  const response = await api.api(`/v2/queues/${name}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as {
    name: string;
    createdAt: number;
    updatedAt: number;
    parallelism: number;
    lag: number;
    paused: boolean;
  };
}

const post = (path: string) => dispatch.api(path, { method: "POST" });

async function stateOf(messageId: string, api = dispatch): Promise<string> {
  const response = await api.api(`/v2/messages/${messageId}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { state: string }).state;
}

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
});

describe("pause and resume", () => {
  it("while messages wait: nothing is delivered, new messages are accepted (lag grows), resume delivers all in order", async () => {
    const target = await receiver();
    await upsert("paused-waiting", 1);
    const pause = await post("/v2/queues/paused-waiting/pause");
    expect(pause.status).toBe(200);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await enqueue(dispatch, "paused-waiting", `${target.url}/w`, n)).messageId);
    expect(await getQueue("paused-waiting")).toMatchObject({ paused: true, lag: 3 });

    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(0);
    for (let n = 3; n < 5; n++) ids.push((await enqueue(dispatch, "paused-waiting", `${target.url}/w`, n)).messageId);
    expect(await getQueue("paused-waiting")).toMatchObject({ paused: true, lag: 5 });
    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(0);
    await expectUntouched(dispatch, ids);

    const resume = await post("/v2/queues/paused-waiting/resume");
    expect(resume.status).toBe(200);
    expect((await getQueue("paused-waiting")).paused).toBe(false);
    await target.waitFor(5);
    expect(indexesOf(target)).toEqual([0, 1, 2, 3, 4]);
    await poll(async () => (await getQueue("paused-waiting")).lag === 0, () => "lag did not drop to 0");
    expect(await attemptsOf(dispatch, ids)).toBe(5);
    expect(target.requests).toHaveLength(5);
  });

  it("while one is in flight: that delivery finishes and counts as delivered, nothing new starts until resume", async () => {
    const { state, responder } = tracking(1000);
    const target = await receiver(responder);
    await upsert("paused-in-flight", 1);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await enqueue(dispatch, "paused-in-flight", `${target.url}/f`, n)).messageId);

    await target.waitFor(1);
    expect(state.inFlight).toBe(1);
    const pause = await post("/v2/queues/paused-in-flight/pause");
    expect(pause.status).toBe(200);

    await poll(async () => (await stateOf(ids[0]!)) === "DELIVERED", () => "the in-flight message was not delivered");
    expect(state.order).toEqual([{ n: 0, status: 200 }]);
    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(1);
    await expectUntouched(dispatch, ids.slice(1));
    expect(await getQueue("paused-in-flight")).toMatchObject({ paused: true, lag: 2 });
    expect(await stateOf(ids[1]!)).toBe("CREATED");

    expect((await post("/v2/queues/paused-in-flight/resume")).status).toBe(200);
    await target.waitFor(3);
    expect(indexesOf(target)).toEqual([0, 1, 2]);
    await poll(async () => (await stateOf(ids[2]!)) === "DELIVERED", () => "the last message was not delivered");
    expect(state.maxInFlight).toBe(1);
  });

  it("messages already started but not yet attempted wait too, and go out on resume", async () => {
    const target = await receiver();
    await upsert("paused-started", 3);
    // Started at once (3 free slots), but their first attempt is 1 s away.
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      ids.push((await enqueue(dispatch, "paused-started", `${target.url}/s`, n, { "Svc-Delay": "1s" })).messageId);
    }
    expect((await post("/v2/queues/paused-started/pause")).status).toBe(200);

    // A marker due after them has arrived: they came due while paused and were passed over.
    await engineCycle(dispatch, "1s");
    expect(target.requests).toHaveLength(0);
    await expectUntouched(dispatch, ids);
    expect(await getQueue("paused-started")).toMatchObject({ paused: true, lag: 3 });

    expect((await post("/v2/queues/paused-started/resume")).status).toBe(200);
    await target.waitFor(3);
    expect(indexesOf(target).sort()).toEqual([0, 1, 2]);
  });

  it("a message paused during its retry backoff is retried first on resume, before the messages behind it", async () => {
    // n=0 fails its first attempt and asks for a retry 1 s later; everything else succeeds.
    const { responder } = tracking(0, (n, attempt) => (n === 0 && attempt === 0 ? { status: 503 } : { status: 200 }));
    const target = await receiver(responder);
    await upsert("paused-retrying", 1);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      // 1,000,000 ms scaled by the test retry delay scale (0.001) = 1 s.
      const headers = { "Svc-Retry-Delay": "1000000", "Svc-Retries": "3" };
      ids.push((await enqueue(dispatch, "paused-retrying", `${target.url}/r`, n, headers)).messageId);
    }
    await target.waitFor(1);
    await poll(async () => (await stateOf(ids[0]!)) === "RETRY", () => "the first message did not go to RETRY");
    expect((await post("/v2/queues/paused-retrying/pause")).status).toBe(200);

    // The retry comes due while the queue is paused: a marker due after it arrives, the retry does not.
    await engineCycle(dispatch, "1s");
    expect(indexesOf(target)).toEqual([0]);
    expect(await attemptsOf(dispatch, ids)).toBe(1);
    expect(await getQueue("paused-retrying")).toMatchObject({ paused: true, lag: 3 });

    expect((await post("/v2/queues/paused-retrying/resume")).status).toBe(200);
    await target.waitFor(4);
    expect(indexesOf(target)).toEqual([0, 0, 1, 2]);
    await poll(
      async () => (await Promise.all(ids.map((id) => stateOf(id)))).every((s) => s === "DELIVERED"),
      () => "not every message was delivered",
    );
  });

  it("pausing twice is not an error and leaves the queue paused; resuming twice is fine too", async () => {
    await upsert("double-pause", 2);
    const first = await post("/v2/queues/double-pause/pause");
    const second = await post("/v2/queues/double-pause/pause");
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(await getQueue("double-pause")).toMatchObject({ paused: true, parallelism: 2 });

    expect((await post("/v2/queues/double-pause/resume")).status).toBe(200);
    expect((await post("/v2/queues/double-pause/resume")).status).toBe(200);
    expect(await getQueue("double-pause")).toMatchObject({ paused: false, parallelism: 2 });
  });

  it("upserting paused: false resumes a paused queue", async () => {
    const target = await receiver();
    await upsert("upsert-resume", 1, true);
    const { messageId } = await enqueue(dispatch, "upsert-resume", `${target.url}/u`, 0);
    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(0);
    await expectUntouched(dispatch, [messageId]);
    await upsert("upsert-resume", 1, false);
    await target.waitFor(1);
  });
});

describe("parallelism", () => {
  it("a parallelism-3 queue never has more than 3 requests in flight at the receiver, and does reach 3", async () => {
    const { state, responder } = tracking(200);
    const target = await receiver(responder);
    // Enqueued while paused, all 15 are ready together when it resumes: whether the limit is reached
    // does not hang on how fast a loaded machine enqueues.
    await upsert("parallel-3", 3, true);
    const ids: string[] = [];
    for (let n = 0; n < 15; n++) ids.push((await enqueue(dispatch, "parallel-3", `${target.url}/p`, n)).messageId);
    await upsert("parallel-3", 3, false);

    await target.waitFor(15, 30_000);
    await poll(() => state.order.length === 15, () => `${state.order.length} of 15 answered`);
    expect(state.maxInFlight).toBe(3);
    expect(indexesOf(target).sort((a, b) => a - b)).toEqual([...Array(15).keys()]);
    await poll(async () => (await getQueue("parallel-3")).lag === 0, () => "lag did not drop to 0");
    expect(await attemptsOf(dispatch, ids)).toBe(15);
    expect(target.requests).toHaveLength(15);
  });

  it("lowering parallelism with upsert applies to the messages that start afterwards", async () => {
    const { state, responder } = tracking(200);
    const target = await receiver(responder);
    await upsert("lowered", 4, true);
    for (let n = 0; n < 8; n++) await enqueue(dispatch, "lowered", `${target.url}/l`, n);
    await upsert("lowered", 1, false);
    await target.waitFor(8, 30_000);
    await poll(() => state.order.length === 8, () => `${state.order.length} of 8 answered`);
    expect(state.maxInFlight).toBe(1);
    expect(indexesOf(target)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe("with two worker processes on one database", () => {
  let api: TestService;

  beforeAll(async () => {
    const databaseUrl = await cloneDatabase();
    api = await startTestService({}, { role: "api", databaseUrl });
    const env = {
      DATABASE_URL: databaseUrl,
      DISPATCH_TOKEN: TEST_TOKEN,
      DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
      DISPATCH_RETRY_DELAY_SCALE: "0.001",
    };
    await Promise.all([startDispatchProcess("worker", env), startDispatchProcess("worker", env)]);
  }, 60_000);
  afterAll(async () => {
    await killAllDispatchProcesses();
    await api?.stop();
  });

  it("a parallelism-1 queue is strictly FIFO under retries: message k starts only after k-1 succeeded", async () => {
    // How many first attempts of message n fail (with a 500) before it succeeds.
    const failures = new Map([[1, 1], [3, 2], [4, 1], [7, 2], [9, 1]]);
    const { state, responder } = tracking(50, (n, attempt) =>
      attempt < (failures.get(n) ?? 0) ? { status: 500, body: "not yet" } : { status: 200 },
    );
    const target = await receiver(responder);
    // Both worker processes are registered on this database and compete for the queue's jobs.
    const workerProcesses = async () => new Set((await storedWorkers(api)).map((worker) => worker.processId)).size;
    await poll(async () => (await workerProcesses()) === 2, () => "two worker processes did not register");
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) {
      ids.push((await enqueue(api, "fifo", `${target.url}/fifo`, n, { "Svc-Retries": "3" })).messageId);
    }
    const expected = [...Array(10).keys()].flatMap((n) => Array<number>((failures.get(n) ?? 0) + 1).fill(n));

    await target.waitFor(expected.length, 60_000);
    await poll(
      async () => (await Promise.all(ids.map((id) => stateOf(id, api)))).every((s) => s === "DELIVERED"),
      () => `received ${JSON.stringify(indexesOf(target))}`,
      30_000,
    );
    // Strictly increasing message order: all attempts of k-1, ending with its success, before k's first.
    expect(indexesOf(target)).toEqual(expected);
    expect(state.order.map((o) => o.n)).toEqual(expected);
    for (let i = 1; i < state.order.length; i++) {
      if (state.order[i]!.n !== state.order[i - 1]!.n) expect(state.order[i - 1]!.status).toBe(200);
    }
    expect(state.maxInFlight).toBe(1);
    expect(await attemptsOf(api, ids)).toBe(expected.length);
    expect(target.requests).toHaveLength(expected.length);
    expect((await getQueue("fifo", api)).lag).toBe(0);
  }, 90_000);

  it("a parallelism-3 queue never exceeds 3 in flight across both workers", async () => {
    const { state, responder } = tracking(200);
    const target = await receiver(responder);
    const setPaused = async (paused: boolean) => {
      const response = await api.api("/v2/queues", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ queueName: "parallel-multi", parallelism: 3, paused }),
      });
      expect(response.status).toBe(200);
    };
    // Enqueued while paused, all 15 are ready together for both workers when it resumes.
    await setPaused(true);
    for (let n = 0; n < 15; n++) await enqueue(api, "parallel-multi", `${target.url}/pm`, n);
    await setPaused(false);

    await target.waitFor(15, 60_000);
    await poll(() => state.order.length === 15, () => `${state.order.length} of 15 answered`);
    expect(state.maxInFlight).toBe(3);
    expect(indexesOf(target).sort((a, b) => a - b)).toEqual([...Array(15).keys()]);
  }, 90_000);
});
