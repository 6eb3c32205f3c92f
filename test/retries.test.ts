/**
 * Retries with backoff end in exactly 1 + retries deliveries, a DLQ entry and
 * a failure callback whose body carries every field of the interface.
 */
import { createHmac } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { defaultBackoffMs } from "../src/domain/delivery/retry-policy";
import { poll } from "./support/poll";
import { startReceiver, useReceiver } from "./support/receiver";
import { dlqEntries, messageEvents, messageState, storedMessage } from "./support/rows";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
const destination = useReceiver();
const failures = useReceiver();

beforeEach(() => {
  destination.requests.length = 0;
  failures.requests.length = 0;
});

const events = (messageId: string) => messageEvents(dispatch, messageId);

/** Checks an HS256 JWT's signature with `key` and returns its claims. */
function verifyJwt(token: string, key: string): Record<string, unknown> {
  const [header, claims, signature] = token.split(".");
  const expected = createHmac("sha256", key).update(`${header}.${claims}`).digest("base64url");
  expect(signature).toBe(expected);
  return JSON.parse(Buffer.from(claims!, "base64url").toString());
}

describe("retries", () => {
  it("makes exactly 1 + retries deliveries, then dead-letters and calls the failure callback", async () => {
    destination.respond(() => ({ status: 503, headers: { "X-Reason": "down" }, body: "unavailable" }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/orders?id=7`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Svc-Retries": "3",
        "Svc-Forward-X-Tenant": "acme",
        "Svc-Failure-Callback": `${failures.url}/failed`,
        "Svc-Failure-Callback-Forward-X-Alert": "page",
      },
      body: '{"order":7}',
    });
    const { messageId } = await response.json();
    // The failure callback follows the final failure: every attempt has been made.
    const [callback] = await failures.waitFor(1);
    expect(destination.requests).toHaveLength(4);
    expect(destination.requests.map((r) => r.headers["svc-retried"])).toEqual(["0", "1", "2", "3"]);
    expect(failures.requests).toHaveLength(1);

    const [dlq] = await dlqEntries(dispatch, messageId);
    expect(dlq!.responseStatus).toBe(503);
    expect(Buffer.from(dlq!.responseBody!).toString()).toBe("unavailable");
    expect(await messageState(dispatch, messageId)).toBe("FAILED");

    expect(callback!.headers["x-alert"]).toBe("page");
    expect(callback!.headers["content-type"]).toBe("application/json");
    const claims = verifyJwt(callback!.headers["svc-signature"] as string, dispatch.service.signingKeys.current);
    expect(claims.sub).toBe(`${failures.url}/failed`);
    const body = JSON.parse(callback!.body.toString());
    const created = (await storedMessage(dispatch, messageId))!;
    expect(body).toEqual({
      status: 503,
      header: expect.objectContaining({ "X-Reason": ["down"] }),
      body: Buffer.from("unavailable").toString("base64"),
      retried: 3,
      maxRetries: 3,
      dlqId: dlq!.dlqId,
      sourceMessageId: messageId,
      url: `${destination.url}/orders?id=7`,
      method: "POST",
      sourceHeader: { "Content-Type": "application/json", "X-Tenant": "acme" },
      sourceBody: Buffer.from('{"order":7}').toString("base64"),
      notBefore: String(created.notBefore.getTime()),
      createdAt: String(created.createdAt.getTime()),
      callerIP: expect.stringMatching(/127\.0\.0\.1/),
    });
  });

  it("waits min(86400, e^(2n)) seconds before retry n in the native dialect (scaled in tests)", async () => {
    destination.respond(() => ({ status: 500 }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/backoff`, {
      method: "POST",
      headers: { "Svc-Retries": "3" },
    });
    const { messageId } = await response.json();
    await destination.waitFor(4);
    const retries = await poll(async () => {
      const found = (await events(messageId)).filter((e) => e.state === "RETRY");
      return found.length >= 3 && found;
    }, "three RETRY events");
    const waits = retries.map((e) => Number(e.waitMs));
    const expected = [0, 1, 2].map((n) => Math.round(Math.min(86400, Math.exp(2 * n)) * 1000 * dispatch.config.retryDelayScale));
    expect(waits).toEqual(expected);
    expect(defaultBackoffMs("svc", 20)).toBe(86_400_000);
    expect(defaultBackoffMs("upstash", 0)).toBeCloseTo(Math.exp(2.5) * 1000);
  });

  it("honours Retry-After from the destination", async () => {
    destination.respond((_r, index) => (index === 0 ? { status: 429, headers: { "Retry-After": "7" } } : { status: 200 }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/limited`, { method: "POST" });
    const { messageId } = await response.json();
    await destination.waitFor(2);
    const retry = await poll(async () => (await events(messageId)).find((e) => e.state === "RETRY"), "the RETRY event");
    expect(Math.round(Number(retry.waitMs))).toBe(Math.round(7000 * dispatch.config.retryDelayScale));
    // The destination has its second request; the DELIVERED event is recorded once it answered.
    await poll(async () => (await events(messageId)).at(-1)!.state === "DELIVERED", "the DELIVERED event");
  });

  it("fails at once on 489 with the NonRetryable-Error header", async () => {
    destination.respond(() => ({ status: 489, headers: { "Svc-NonRetryable-Error": "true" }, body: "bad input" }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/fatal`, {
      method: "POST",
      headers: { "Svc-Retries": "5", "Svc-Failure-Callback": `${failures.url}/fatal` },
    });
    const { messageId } = await response.json();
    const [callback] = await failures.waitFor(1);
    expect(destination.requests).toHaveLength(1);
    expect(JSON.parse(callback!.body.toString())).toMatchObject({ status: 489, retried: 0, maxRetries: 5 });
    expect((await events(messageId)).map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "FAILED"]);
  });

  it("treats an unreachable destination as a failed attempt with a clear error", async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const response = await dispatch.api(`/v2/publish/${url}/gone`, { method: "POST", headers: { "Svc-Retries": "0" } });
    const { messageId } = await response.json();
    const log = await poll(async () => {
      const found = await events(messageId);
      return found.at(-1)?.state === "FAILED" && found;
    }, "the FAILED event");
    expect(log.map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "FAILED"]);
    expect(log[2]!.error).toMatch(/ECONNREFUSED/);
  });
});
