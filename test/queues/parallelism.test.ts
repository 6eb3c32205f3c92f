/**
 * A queue's parallelism, measured at the receiver: never more than the limit
 * in flight and the limit reached, a lowered limit applying to what starts
 * afterwards, and with two worker processes on one database strict FIFO
 * under retries at parallelism 1 and the limit held across both workers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cloneDatabase } from "../support/database";
import { poll } from "../support/poll";
import { killAllDispatchProcesses, startDispatchProcess } from "../support/processes";
import { attemptsOf, storedWorkers } from "../support/rows";
import { startTestService, TEST_TOKEN, type TestService, useDispatch } from "../support/service";
import { useReceivers } from "../support/receiver";
import { enqueue, indexesOf, queueApi, tracking } from "./fixtures";

const dispatch = useDispatch();
const receiver = useReceivers();
const { upsert, getQueue, stateOf } = queueApi(dispatch);

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
