/**
 * Retrying dead letter queue entries: a retry is a new message like the
 * original (with request headers of either dialect overriding its settings,
 * in the same queue) and removes the entry; an unknown entry or a bad
 * override, two retries at once, and a filtered selection in bulk.
 */
import { describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { startReceiver, useReceiver } from "../support/receiver";
import { countMessages, messagesWhere } from "../support/rows";
import { useDispatch } from "../support/service";
import { dlqApi, failingUnlessHealed } from "./fixtures";

const dispatch = useDispatch();
/** Paths the receiver answers with 200; every other path fails (404 under /missing, else 500). */
const healed = new Set<string>();
const receiver = useReceiver(failingUnlessHealed(healed));
const { dlqIdOf, failed, get, send, requestsTo } = dlqApi(dispatch, receiver);

describe("retrying DLQ entries", () => {
  it("re-delivers the original as a new message and removes the entry", async () => {
    const callbacks = await startReceiver();
    try {
      const original = await failed("/retry-one?x=1", {
        "Content-Type": "text/plain",
        "Svc-Method": "PATCH",
        "Svc-Forward-X-Tenant": "acme",
        "Svc-Label": "retry-one",
        "Svc-Callback": `${callbacks.url}/done`,
      });
      await callbacks.waitFor(1);
      healed.add("/retry-one");
      const retry = await send("POST", `/v2/dlq/retry/${original.dlqId}`);
      expect(retry.status).toBe(201);
      expect(retry.body).toEqual({ messageId: expect.stringMatching(/^msg_/) });
      expect(retry.body.messageId).not.toBe(original.messageId);
      expect((await get(`/v2/dlq/${original.dlqId}`)).status).toBe(404);

      const [, got] = await poll(async () => requestsTo("/retry-one").length >= 2 && requestsTo("/retry-one"), "the retry");
      expect(got!.method).toBe("PATCH");
      expect(got!.path).toBe("/retry-one?x=1");
      expect(got!.body.toString()).toBe("body of /retry-one?x=1");
      expect(got!.headers).toMatchObject({
        "content-type": "text/plain",
        "x-tenant": "acme",
        "svc-message-id": retry.body.messageId,
        "svc-retried": "0",
      });
      const [, callback] = await callbacks.waitFor(2);
      expect(JSON.parse(callback!.body.toString())).toMatchObject({ status: 200, sourceMessageId: retry.body.messageId });
      const message = (await get(`/v2/messages/${retry.body.messageId}`)).body;
      expect(message).toMatchObject({ state: "DELIVERED", labels: ["retry-one"], maxRetries: 0, retried: 0 });
    } finally {
      await callbacks.close();
    }
  });

  it("request headers of either dialect override the original's settings", async () => {
    const original = await failed("/retry-override", { "Upstash-Forward-X-A": "1" });
    const retry = await send("POST", `/v2/dlq/retry/${original.dlqId}`, { headers: { "Upstash-Retries": "2" } });
    expect(retry.status).toBe(201);
    // One attempt of the original, then 1 + 2 of the retry; it fails again into a new entry.
    const next = await dlqIdOf(retry.body.messageId);
    expect(next).not.toBe(original.dlqId);
    const attempts = requestsTo("/retry-override");
    expect(attempts.map((r) => r.headers["upstash-retried"])).toEqual(["0", "0", "1", "2"]);
    expect(attempts.every((r) => r.headers["x-a"] === "1")).toBe(true);
    expect((await get(`/v2/dlq/${next}`)).body).toMatchObject({ maxRetries: 2, retried: 2 });

    const delayed = await send("POST", `/v2/dlq/retry/${next}`, { headers: { "Svc-Delay": "1h" } });
    const message = (await get(`/v2/messages/${delayed.body.messageId}`)).body;
    expect(message.notBefore).toBeGreaterThan(Date.now() + 3_500_000);
    expect(message.header).toMatchObject({ "X-A": ["1"] });
    expect(message.maxRetries).toBe(2);
  });

  it("a retry of a queued message goes to the same queue", async () => {
    const original = await failed("/retry-queued", {}, "retry-queue");
    healed.add("/retry-queued");
    const retry = await send("POST", `/v2/dlq/retry/${original.dlqId}`);
    expect((await get(`/v2/messages/${retry.body.messageId}`)).body.queueName).toBe("retry-queue");
    await poll(async () => requestsTo("/retry-queued").length === 2, "the queued retry");
  });

  it("an unknown entry is a 404, a bad override a 400 that keeps the entry", async () => {
    expect((await send("POST", "/v2/dlq/retry/dlq_unknown")).status).toBe(404);
    const { dlqId } = await failed("/retry-bad");
    const bad = await send("POST", `/v2/dlq/retry/${dlqId}`, { headers: { "Svc-Retries": "lots" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/retries/);
    expect((await get(`/v2/dlq/${dlqId}`)).status).toBe(200);
  });

  it("two concurrent retries of one entry make one new message", async () => {
    const { dlqId } = await failed("/retry-race");
    healed.add("/retry-race");
    const results = await Promise.all([1, 2].map(() => send("POST", `/v2/dlq/retry/${dlqId}`)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 404]);
    await poll(async () => requestsTo("/retry-race").length === 2, "the retry");
    // One retry message was made, and it is finished: nothing more can go out.
    const retries = await messagesWhere(dispatch, { urlLike: "%/retry-race" });
    expect(retries.length).toBe(2);
    await poll(
      async () => (await countMessages(dispatch, { urlLike: "%/retry-race", states: ["DELIVERED"] })) === 1,
      "the retry's outcome",
    );
    expect(requestsTo("/retry-race")).toHaveLength(2);
  });

  it("retries a filtered selection in bulk, answering an empty cursor when done", async () => {
    const entries = await Promise.all([0, 1, 2].map((i) => failed(`/retry-bulk-${i}`, { "Svc-Label": "retry-bulk" })));
    for (const i of [0, 1, 2]) healed.add(`/retry-bulk-${i}`);
    const first = await send("POST", "/v2/dlq/retry?label=retry-bulk&count=2");
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ responses: [{ messageId: expect.any(String) }, { messageId: expect.any(String) }], cursor: expect.any(String) });
    const rest = await send("POST", `/v2/dlq/retry?label=retry-bulk&count=2&cursor=${encodeURIComponent(first.body.cursor)}`);
    expect(rest.body).toEqual({ responses: [{ messageId: expect.any(String) }], cursor: "" });
    await poll(async () => [0, 1, 2].every((i) => requestsTo(`/retry-bulk-${i}`).length === 2), "three retries");
    expect((await get(`/v2/dlq?dlqIds=${entries.map((e) => e.dlqId).join(",")}`)).body).toEqual({ messages: [] });
  });
});
