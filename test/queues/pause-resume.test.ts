/**
 * Pausing and resuming a queue: while messages wait, while one is in flight,
 * while messages are started but not yet attempted or in a retry's backoff,
 * pausing or resuming twice, and an upsert with paused: false.
 */
import { describe, expect, it } from "vitest";
import { engineCycle, expectUntouched } from "../support/engine";
import { poll } from "../support/poll";
import { attemptsOf } from "../support/rows";
import { useDispatch } from "../support/service";
import { useReceivers } from "../support/receiver";
import { enqueue, indexesOf, queueApi, tracking } from "./fixtures";

const dispatch = useDispatch();
const receiver = useReceivers();
const { upsert, getQueue, post, stateOf } = queueApi(dispatch);

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
    // The first delivery is answered once the pause request has returned, however long that takes.
    let paused!: () => void;
    const { state, responder } = tracking(new Promise<void>((resolve) => (paused = resolve)));
    const target = await receiver(responder);
    await upsert("paused-in-flight", 1);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await enqueue(dispatch, "paused-in-flight", `${target.url}/f`, n)).messageId);

    await target.waitFor(1);
    expect(state.inFlight).toBe(1);
    const pause = await post("/v2/queues/paused-in-flight/pause");
    expect(pause.status).toBe(200);
    paused();

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
