/**
 * Callbacks carry the destination's response (base64) and describe the
 * source message; they are new, signed messages configured by the
 * Callback-* headers.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useReceiver } from "./support/receiver";
import { messagesWhere } from "./support/rows";
import { useDispatch } from "./support/service";

/** Delays are scaled (DISPATCH_DELAY_SCALE): a 60 s Callback-Delay waits 300 ms, and is stored as 60 s. */
const DELAY_SCALE = 0.005;
const dispatch = useDispatch({ delayScale: DELAY_SCALE });
const destination = useReceiver();
const callbacks = useReceiver();

beforeEach(() => {
  destination.requests.length = 0;
  callbacks.requests.length = 0;
  callbacks.respond(() => ({ status: 200 }));
});

describe("callback", () => {
  it("sends the destination's response and the source message to the callback URL", async () => {
    const binary = Buffer.from([0, 1, 2, 250, 255]);
    destination.respond(() => ({ status: 201, headers: { "X-Result": "made", "Content-Type": "application/octet-stream" }, body: binary }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/create`, {
      method: "POST",
      headers: {
        "Content-Type": "text/plain",
        "Svc-Method": "PUT",
        "Svc-Retries": "2",
        "Svc-Callback": `${callbacks.url}/cb`,
        "Svc-Callback-Forward-X-Callback-Token": "s3cret",
        "Svc-Callback-Method": "PATCH",
      },
      body: "héllo",
    });
    const { messageId } = await response.json();
    const [callback] = await callbacks.waitFor(1);
    expect(callback!.method).toBe("PATCH");
    expect(callback!.headers["x-callback-token"]).toBe("s3cret");
    expect(callback!.headers["svc-signature"]).toBeTruthy();
    const body = JSON.parse(callback!.body.toString());
    expect(Buffer.from(body.body, "base64").equals(binary)).toBe(true);
    expect(body).toMatchObject({
      status: 201,
      header: { "X-Result": ["made"], "Content-Type": ["application/octet-stream"] },
      retried: 0,
      maxRetries: 2,
      sourceMessageId: messageId,
      url: `${destination.url}/create`,
      method: "PUT",
      sourceHeader: { "Content-Type": "text/plain" },
      sourceBody: Buffer.from("héllo").toString("base64"),
    });
    expect(body).not.toHaveProperty("dlqId");
    expect(Number(body.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    // The callback is a message of its own, linked to its source.
    const [row] = await messagesWhere(dispatch, { sourceMessageId: messageId });
    expect(row).toMatchObject({ origin: "callback", maxRetries: 2 });
  });

  it("uses Callback-Retries for the callback message and retries it on failure", async () => {
    destination.respond(() => ({ status: 200 }));
    callbacks.respond((_r, index) => ({ status: index < 1 ? 500 : 200 }));
    await dispatch.api(`/v2/publish/${destination.url}/x`, {
      method: "POST",
      headers: { "Svc-Callback": `${callbacks.url}/cb`, "Svc-Callback-Retries": "1", "Svc-Retries": "0" },
    });
    const requests = await callbacks.waitFor(2);
    expect(requests.map((r) => r.headers["svc-retried"])).toEqual(["0", "1"]);
  });

  it("native dialect: calls back once when delivery finishes, not after each failed attempt", async () => {
    destination.respond((_r, index) => ({ status: index < 2 ? 500 : 200 }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/flaky`, {
      method: "POST",
      headers: { "Svc-Retries": "3", "Svc-Callback": `${callbacks.url}/cb` },
    });
    const { messageId } = await response.json();
    await destination.waitFor(3);
    await callbacks.waitFor(1);
    // One callback message was made, and the source is finished: no other can be.
    const made = await messagesWhere(dispatch, { sourceMessageId: messageId });
    expect(made).toHaveLength(1);
    expect(callbacks.requests).toHaveLength(1);
    expect(JSON.parse(callbacks.requests[0]!.body.toString())).toMatchObject({ status: 200, retried: 2 });
  });

  it("compat dialect: calls back after every attempt, as the workflow SDK expects", async () => {
    destination.respond((_r, index) => ({ status: index < 2 ? 500 : 200 }));
    await dispatch.api(`/v2/publish/${destination.url}/flaky`, {
      method: "POST",
      headers: { "Upstash-Retries": "3", "Upstash-Callback": `${callbacks.url}/cb` },
    });
    const requests = await callbacks.waitFor(3);
    const bodies = requests.map((r) => JSON.parse(r.body.toString()));
    expect(bodies.map((b) => [b.status, b.retried, b.maxRetries])).toEqual([
      [500, 0, 3],
      [500, 1, 3],
      [200, 2, 3],
    ]);
    expect(requests[0]!.headers["upstash-signature"]).toBeTruthy();
  });

  it("delays the callback by Callback-Delay", async () => {
    destination.respond(() => ({ status: 200 }));
    const response = await dispatch.api(`/v2/publish/${destination.url}/later`, {
      method: "POST",
      headers: { "Svc-Callback": `${callbacks.url}/cb`, "Svc-Callback-Delay": "60s" },
    });
    const { messageId } = await response.json();
    const [delivered] = await destination.waitFor(1);
    const [callback] = await callbacks.waitFor(1);
    expect(callback!.at - delivered!.at).toBeGreaterThanOrEqual(60_000 * DELAY_SCALE - 20);
    const [stored] = await messagesWhere(dispatch, { sourceMessageId: messageId });
    expect(stored!.delayMs).toBeGreaterThanOrEqual(60_000);
    expect(stored!.delayMs).toBeLessThan(60_100);
  });
});
