/**
 * Retry now (`POST /v2/messages/{id}/retry-now`, a Dispatch extension): a
 * message waiting out a long retry backoff is attempted at once, and the
 * receiver gets the retry; an unknown message is a 404, one that is not
 * waiting on a backoff a 409 saying what it does instead, and a read-only
 * token may not do it. Backoff runs at its real length here (no scale), so
 * only retry now can bring the retry before the test ends.
 */
import { describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { messageState, storedMessage } from "./support/rows";
import { request, useDispatch } from "./support/service";

const READONLY = "retry-now-readonly-token-0123456789";
const dispatch = useDispatch({ retryDelayScale: 1, readonlyTokens: [READONLY] });
/** `/flaky/...` fails its first attempt, then succeeds; anything else succeeds. */
const receiver = useReceiver((req) => {
  const first = req.path.startsWith("/flaky") && receiver.requests.filter((r) => r.path === req.path).length === 1;
  return first ? { status: 500, body: '{"error":"down for a moment"}' } : { status: 200, body: "ok" };
});

/** Thirty minutes, in the milliseconds a Retry-Delay expression gives. */
const THIRTY_MINUTES = "1800000";

/** Publishes to `/flaky/<name>` with a 30-minute retry delay and waits until its first attempt failed and the retry waits. */
async function messageInBackoff(name: string): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${receiver.url}/flaky/${name}`, {
    method: "POST",
    headers: { "Svc-Retries": "3", "Svc-Retry-Delay": THIRTY_MINUTES },
    body: name,
  });
  const { messageId } = await response.json();
  await poll(async () => {
    const stored = await storedMessage(dispatch, messageId);
    return stored?.state === "RETRY" && stored.dueAt !== null;
  }, `${name} to wait out its backoff`);
  return messageId;
}

const retryNow = (id: string, token?: string) =>
  token === undefined
    ? dispatch.api(`/v2/messages/${id}/retry-now`, { method: "POST" })
    : request(`${dispatch.baseUrl}/v2/messages/${id}/retry-now`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });

describe("retry now", () => {
  it("delivers a message waiting out a 30-minute backoff at once", async () => {
    const messageId = await messageInBackoff("thirty-minutes");
    const before = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(before.state).toBe("RETRY");
    expect(before.nextDeliveryTime - before.createdAt).toBeGreaterThan(29 * 60_000);

    const response = await retryNow(messageId);
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer).toEqual({ messageId, dueAt: expect.any(Number) });
    expect(answer.dueAt).toBeLessThan(before.nextDeliveryTime);

    const path = "/flaky/thirty-minutes";
    await poll(() => receiver.requests.filter((r) => r.path === path).length === 2, "the retry to reach the receiver");
    const retry = receiver.requests.filter((r) => r.path === path)[1]!;
    expect(retry.headers["svc-retried"]).toBe("1");
    expect(retry.body.toString()).toBe("thirty-minutes");
    await poll(async () => (await messageState(dispatch, messageId)) === "DELIVERED", "the message to be delivered");
    const after = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(after).toMatchObject({ state: "DELIVERED", retried: 1, maxRetries: 3 });
  });

  it("answers 404 for a message that does not exist", async () => {
    const response = await retryNow("msg_does_not_exist");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "message msg_does_not_exist not found" });
  });

  it("answers 409 for a message that is not waiting on a backoff, saying what it does", async () => {
    const delivered = await (await dispatch.api(`/v2/publish/${receiver.url}/fine`, { method: "POST", body: "x" })).json();
    await poll(async () => (await messageState(dispatch, delivered.messageId)) === "DELIVERED", "the message to be delivered");
    const finished = await retryNow(delivered.messageId);
    expect(finished.status).toBe(409);
    expect((await finished.json()).error).toBe(
      `message ${delivered.messageId} is not waiting on a retry backoff: it is DELIVERED, not waiting to be retried`,
    );

    const delayed = await (
      await dispatch.api(`/v2/publish/${receiver.url}/later`, { method: "POST", headers: { "Svc-Delay": "1d" }, body: "x" })
    ).json();
    const waiting = await retryNow(delayed.messageId);
    expect(waiting.status).toBe(409);
    expect((await waiting.json()).error).toContain("it is CREATED");
    expect(await messageState(dispatch, delayed.messageId)).toBe("CREATED");
  });

  it("is refused to a read-only token, and the message keeps waiting", async () => {
    const messageId = await messageInBackoff("read-only");
    const { dueAt } = (await storedMessage(dispatch, messageId))!;
    const response = await retryNow(messageId, READONLY);
    expect(response.status).toBe(403);
    expect((await response.json()).error).toContain("read-only");
    const stored = await storedMessage(dispatch, messageId);
    expect(stored).toMatchObject({ state: "RETRY", dueAt });
    expect(receiver.requests.filter((r) => r.path === "/flaky/read-only")).toHaveLength(1);
  });
});
