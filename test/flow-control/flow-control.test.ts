/**
 * Flow control in one service: parallelism and rate per key as a real
 * receiver sees them, pause, pin and unpin, rate reset, the key's state, the
 * fields and filters of messages, and unlimited messages going by while a key
 * is throttled.
 */
import { describe, expect, it } from "vitest";
import { useCountingReceiver } from "../support/concurrency";
import { busiestWindow } from "../support/sliding-window";
import { expectHeldBack } from "../support/engine";
import { poll } from "../support/poll";
import { attempts, messagesWhere } from "../support/rows";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const counting = useCountingReceiver(100);

async function publish(path: string, key: string | null, value: string | null, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...extra };
  if (key !== null) headers["Svc-Flow-Control-Key"] = key;
  if (value !== null) headers["Svc-Flow-Control-Value"] = value;
  const response = await dispatch.api(`/v2/publish/${counting.receiver.url}${path}`, { method: "POST", headers, body: path });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.messageId as string;
}

const arrivals = (path: string) => counting.receiver.requests.filter((request) => request.path === path);
const waitForArrivals = (path: string, count: number) =>
  poll(() => arrivals(path).length >= count && arrivals(path), `${count} requests to ${path}`, 30_000);
const keyInfo = async (key: string) => (await dispatch.api(`/v2/flowControl/${key}`)).json();

describe("flow control", () => {
  it("never has more than parallelism deliveries of a key in flight, and does reach it", async () => {
    await publish("/par", "par-key", "parallelism=3");
    await waitForArrivals("/par", 1);
    // Eleven more wait while the key is paused, so all are ready together when it resumes: whether the
    // limit is reached does not hang on how fast the test publishes on a loaded machine.
    expect((await dispatch.api("/v2/flowControl/par-key/pause", { method: "POST" })).status).toBe(200);
    const held = [];
    for (let i = 0; i < 11; i++) held.push(await publish("/par", "par-key", "parallelism=3"));
    await expectHeldBack(dispatch, held);
    expect((await dispatch.api("/v2/flowControl/par-key/resume", { method: "POST" })).status).toBe(200);
    await waitForArrivals("/par", 12);
    expect(counting.maxInFlight("/par")).toBe(3);
    await poll(async () => (await keyInfo("par-key")).parallelismCount === 0, "no delivery of par-key in flight");
    expect(await keyInfo("par-key")).toMatchObject({
      flowControlKey: "par-key",
      parallelismMax: 3,
      parallelismCount: 0,
      rateMax: 0,
      waitListSize: 0,
      isPaused: false,
      isPinnedParallelism: false,
      isPinnedRate: false,
    });
  });

  it("starts at most rate deliveries in any period", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push(await publish("/rate", "rate-key", "rate=5, period=1s"));
    await waitForArrivals("/rate", 15);
    // When each request was sent, as the worker took it just before sending: on a loaded machine the
    // receiver's arrival times carry scheduling delays that are not the service's.
    const recorded = async () => {
      const rows = await attempts(dispatch, ids);
      return rows.length === 15 && rows;
    };
    const starts = await poll(recorded, "the 15 attempts recorded");
    expect(busiestWindow(starts.map((start) => start.startedAt.getTime()), 1000)).toBeLessThanOrEqual(5);
    const info = await keyInfo("rate-key");
    expect(info).toMatchObject({ rateMax: 5, ratePeriod: 1, parallelismMax: 0 });
    expect(info.rateCount).toBeLessThanOrEqual(5);
  });

  it("holds a paused key's messages and delivers them on resume", async () => {
    await publish("/paused", "paused-key", "parallelism=2");
    await waitForArrivals("/paused", 1);
    expect((await dispatch.api("/v2/flowControl/paused-key/pause", { method: "POST" })).status).toBe(200);
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await publish("/paused", "paused-key", "parallelism=2"));
    await expectHeldBack(dispatch, held);
    expect(await keyInfo("paused-key")).toMatchObject({ isPaused: true, waitListSize: 4 });
    expect((await dispatch.api("/v2/flowControl/paused-key/resume", { method: "POST" })).status).toBe(200);
    await waitForArrivals("/paused", 5);
    expect(await keyInfo("paused-key")).toMatchObject({ isPaused: false });
  });

  it("a pinned limit overrides what messages bring until unpinned", async () => {
    await publish("/pin-seed", "pin-key", "parallelism=5");
    const pinned = await dispatch.api("/v2/flowControl/pin-key/pin?parallelism=1", { method: "POST" });
    expect(pinned.status).toBe(200);
    for (let i = 0; i < 5; i++) await publish("/pinned", "pin-key", "parallelism=5");
    await waitForArrivals("/pinned", 5);
    expect(counting.maxInFlight("/pinned")).toBe(1);
    expect(await keyInfo("pin-key")).toMatchObject({ parallelismMax: 1, isPinnedParallelism: true });
    expect((await dispatch.api("/v2/flowControl/pin-key/unpin?parallelism=true", { method: "POST" })).status).toBe(200);
    expect(await keyInfo("pin-key")).toMatchObject({ parallelismMax: 1, isPinnedParallelism: false });
    await publish("/unpinned", "pin-key", "parallelism=4");
    expect(await keyInfo("pin-key")).toMatchObject({ parallelismMax: 4 });
  });

  it("resetRate forgets the window; bad pins are 400 and unknown keys 404", async () => {
    for (let i = 0; i < 2; i++) await publish("/reset", "reset-key", "rate=2, period=1m");
    await waitForArrivals("/reset", 2);
    const third = await publish("/reset", "reset-key", "rate=2, period=1m");
    await expectHeldBack(dispatch, [third]);
    expect(await keyInfo("reset-key")).toMatchObject({ rateCount: 2, rateMax: 2, ratePeriod: 60 });
    expect((await dispatch.api("/v2/flowControl/reset-key/resetRate", { method: "POST" })).status).toBe(200);
    await waitForArrivals("/reset", 3);
    // The window restarted with the third: a fourth fits in it, a fifth waits for `reset`.
    await publish("/reset", "reset-key", "rate=2, period=1m");
    const fifth = await publish("/reset", "reset-key", "rate=2, period=1m");
    await waitForArrivals("/reset", 4);
    await expectHeldBack(dispatch, [fifth]);
    expect((await dispatch.api("/v2/flowControl/reset-key/reset", { method: "POST" })).status).toBe(200);
    await waitForArrivals("/reset", 5);

    for (const query of ["", "?parallelism=0", "?rate=x", "?period=0"]) {
      const response = await dispatch.api(`/v2/flowControl/reset-key/pin${query}`, { method: "POST" });
      expect(response.status, query).toBe(400);
      expect((await response.json()).error).toBeTruthy();
    }
    for (const action of ["pause", "resume", "pin?rate=1", "unpin?rate=true", "resetRate", "reset"]) {
      expect((await dispatch.api(`/v2/flowControl/no-such-key/${action}`, { method: "POST" })).status).toBe(404);
    }
    expect((await dispatch.api("/v2/flowControl/no-such-key")).status).toBe(404);
  });

  it("unlimited messages go by while a key is throttled", async () => {
    const slow = [];
    for (let i = 0; i < 6; i++) slow.push(await publish("/throttled", "slow-key", "rate=1, period=1m"));
    for (let i = 0; i < 20; i++) await publish("/free", null, null);
    await waitForArrivals("/free", 20);
    expect(arrivals("/throttled")).toHaveLength(1);
    expect((await keyInfo("slow-key")).waitListSize).toBe(5);
  });

  it("messages show their flow control, and it filters logs, the DLQ and bulk cancel", async () => {
    const id = await publish("/shown", "shown-key", "parallelism=2, rate=7, period=10s");
    const message = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(message).toMatchObject({ flowControlKey: "shown-key", parallelism: 2, rate: 7, period: 10 });
    await waitForArrivals("/shown", 1);
    const logs = await (await dispatch.api("/v2/events?flowControlKey=shown-key")).json();
    expect(new Set(logs.events.map((event: { messageId: string }) => event.messageId))).toEqual(new Set([id]));
    expect(logs.events[0]).toMatchObject({ flowControlKey: "shown-key", parallelism: 2, rate: 7, period: 10 });

    // Nothing listens on port 9: the attempt fails, and with no retries the message goes to the DLQ.
    const failing = await dispatch.api("/v2/publish/http://127.0.0.1:9/dead", {
      method: "POST",
      headers: { "Svc-Retries": "0", "Svc-Flow-Control-Key": "dead-key", "Svc-Flow-Control-Value": "rate=3" },
    });
    const { messageId: dead } = await failing.json();
    const dlq = await poll(async () => {
      const { messages } = await (await dispatch.api("/v2/dlq?flowControlKey=dead-key")).json();
      return messages.length > 0 && messages;
    }, "the failed message in the DLQ");
    expect(dlq).toHaveLength(1);
    expect(dlq[0]).toMatchObject({ messageId: dead, flowControlKey: "dead-key", rate: 3, period: 1 });
    expect((await (await dispatch.api("/v2/dlq?flowControlKey=shown-key")).json()).messages).toEqual([]);
    // A retry from the DLQ keeps the key.
    const retried = await (await dispatch.api(`/v2/dlq/retry/${dlq[0].dlqId}`, { method: "POST" })).json();
    const retry = await (await dispatch.api(`/v2/messages/${retried.messageId}`)).json();
    expect(retry).toMatchObject({ flowControlKey: "dead-key", rate: 3 });

    const a = await publish("/cancel", "cancel-a", "parallelism=1", { "Svc-Delay": "1h" });
    const b = await publish("/cancel", "cancel-b", "parallelism=1", { "Svc-Delay": "1h" });
    const c = await publish("/cancel", "cancel-c", "parallelism=1", { "Svc-Delay": "1h" });
    const cancelled = await dispatch.api("/v2/messages?flowControlKey=cancel-a&flowControlKey=cancel-b", { method: "DELETE" });
    expect(await cancelled.json()).toEqual({ cancelled: 2 });
    const states = await messagesWhere(dispatch, { ids: [a, b, c] });
    expect(Object.fromEntries(states.map((row) => [row.id, row.state]))).toEqual({ [a]: "CANCELED", [b]: "CANCELED", [c]: "CREATED" });
  });

  it("lists keys with search, and reports global parallelism", async () => {
    const all = await (await dispatch.api("/v2/flowControl")).json();
    expect(all.map((info: { flowControlKey: string }) => info.flowControlKey)).toEqual(expect.arrayContaining(["par-key", "rate-key"]));
    const found = await (await dispatch.api("/v2/flowControl?search=RATE")).json();
    expect(found.map((info: { flowControlKey: string }) => info.flowControlKey)).toEqual(["rate-key"]);
    const global = await (await dispatch.api("/v2/globalParallelism")).json();
    expect(global).toEqual({ parallelismMax: dispatch.config.workerConcurrency, parallelismCount: expect.any(Number) });
  });
});
