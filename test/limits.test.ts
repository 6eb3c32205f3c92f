/**
 * Limits: a value over a limit answers 412 with a JSON error naming the
 * limit and the setting that raises it (a fixed limit says so), a malformed
 * value stays 400, and nothing is stored either way. Bodies over the maximum
 * message size answer 413 on every path that takes one, naming the setting.
 */
import { describe, expect, it } from "vitest";
import { storedRowCount } from "./support/rows";
import { useDispatch } from "./support/service";

const MAX_BYTES = 64 * 1024;
const dispatch = useDispatch({ maxRetries: 5, maxDelayMs: 3_600_000, maxTimeoutMs: 60_000, maxQueueParallelism: 10, maxMessageBytes: MAX_BYTES });


const rows = () => storedRowCount(dispatch);

async function expectRefused(response: Response, status: number, pattern: RegExp): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(JSON.parse(text).error).toMatch(pattern);
}

const publish = (headers: Record<string, string>, body = "x") =>
  dispatch.api("/v2/publish/http://127.0.0.1:9/limits", { method: "POST", headers, body });

describe("a value over a limit", () => {
  it("answers 412 naming the setting; a malformed value stays 400; nothing is stored", async () => {
    const before = await rows();
    await expectRefused(await publish({ "Upstash-Retries": "6" }), 412, /at most 5, got 6 \(raise it with DISPATCH_MAX_RETRIES\)/);
    await expectRefused(await publish({ "Upstash-Delay": "2h" }), 412, /DISPATCH_MAX_DELAY/);
    const farAway = String(Math.floor(Date.now() / 1000) + 7200);
    await expectRefused(await publish({ "Upstash-Not-Before": farAway }), 412, /DISPATCH_MAX_DELAY/);
    await expectRefused(await publish({ "Upstash-Timeout": "2m" }), 412, /DISPATCH_MAX_TIMEOUT/);
    await expectRefused(await publish({ "Svc-Retries": "6" }), 412, /svc-retries.*DISPATCH_MAX_RETRIES/);
    const queue = (parallelism: unknown) =>
      dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "limited", parallelism }) });
    await expectRefused(await queue(11), 412, /parallelism must be at most 10, got 11 \(raise it with DISPATCH_MAX_QUEUE_PARALLELISM\)/);
    const items = Array.from({ length: 1001 }, () => ({ destination: "http://127.0.0.1:9/x" }));
    await expectRefused(await dispatch.api("/v2/batch", { method: "POST", body: JSON.stringify(items) }), 412, /1000 items, got 1001 \(a fixed limit\)/);

    await expectRefused(await publish({ "Upstash-Retries": "many" }), 400, /retries/);
    await expectRefused(await publish({ "Upstash-Delay": "soon" }), 400, /delay/);
    await expectRefused(await queue(-1), 400, /parallelism/);
    expect(await rows()).toBe(before);
  });

  it("within the limits is accepted", async () => {
    const response = await publish({ "Upstash-Retries": "5", "Upstash-Delay": "1h", "Upstash-Timeout": "1m" });
    expect(response.status).toBe(200);
    const queue = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "limited", parallelism: 10 }) });
    expect(queue.status).toBe(200);
  });
});

describe("a body over the maximum message size", () => {
  const big = "y".repeat(MAX_BYTES + 1);
  const tooLarge = /maximum message size of 65536 bytes \(raise it with DISPATCH_MAX_MESSAGE_SIZE\)/;

  it("answers 413 on every path that takes one, and stores nothing", async () => {
    const before = await rows();
    await expectRefused(await publish({}, big), 413, tooLarge);
    await expectRefused(await dispatch.api("/v2/enqueue/limited/http://127.0.0.1:9/x", { method: "POST", body: big }), 413, tooLarge);
    const batch = JSON.stringify([{ destination: "http://127.0.0.1:9/x", body: big }]);
    await expectRefused(await dispatch.api("/v2/batch", { method: "POST", body: batch }), 413, tooLarge);
    await expectRefused(await dispatch.api("/v2/trigger/http://127.0.0.1:9/wf", { method: "POST", body: big }), 413, tooLarge);
    await expectRefused(await dispatch.api("/v2/notify/some-event", { method: "POST", body: big }), 413, tooLarge);
    await expectRefused(await dispatch.api("/v2/notify/wfr_x/some-event", { method: "POST", body: big }), 413, tooLarge);
    await expectRefused(await dispatch.api("/v2/workflows/runs/wfr_x", { method: "DELETE", body: big }), 413, tooLarge);
    const hook = await fetch(`${dispatch.baseUrl}/v2/workflows/hooks/test-user/wfr_x/evt`, { method: "POST", body: big });
    await expectRefused(hook, 413, tooLarge);
    expect(await rows()).toBe(before);
  });

  it("at the limit is accepted", async () => {
    expect((await publish({}, "z".repeat(MAX_BYTES))).status).toBe(200);
  });
});
