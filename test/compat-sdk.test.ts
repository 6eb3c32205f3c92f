/**
 * The official `@upstash/qstash` SDK, unmodified, pointed at Dispatch: what it
 * publishes arrives at the destination in the compat dialect, its message API
 * reads and cancels, and its Receiver verifies Dispatch's signatures.
 */
import { Client, Receiver as SignatureReceiver, SignatureError } from "@upstash/qstash";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { engineCycle, expectUntouched } from "./support/engine";
import { type Received, type Receiver, startReceiver } from "./support/receiver";
import { attemptsOf, countMessages } from "./support/rows";
import { TEST_TOKEN, useDispatch } from "./support/service";

/** Delays are scaled (DISPATCH_DELAY_SCALE): a 60 s delay waits 300 ms, and is stored as 60 s. */
const dispatch = useDispatch({ delayScale: 0.005 });
let client: Client;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // devMode: false keeps the SDK from looking for (or downloading) its local dev server.
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A receiver of its own for one test, closed after it. */
async function destination(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const receiver = await startReceiver(...args);
  receivers.push(receiver);
  return receiver;
}

/** A Receiver holding Dispatch's signing keys (or the ones given). */
function signatureReceiver(keys: { current: string; next: string } = dispatch.service.signingKeys) {
  return new SignatureReceiver({ currentSigningKey: keys.current, nextSigningKey: keys.next, devMode: false });
}

const signatureOf = (got: Received) => got.headers["upstash-signature"] as string;

describe("publishing with the SDK", () => {
  it("publishJSON with every option delivers the JSON body, method, forwarded headers and compat headers", async () => {
    const target = await destination();
    const callbacks = await destination();
    const url = `${target.url}/orders/created?tenant=acme`;
    const result = await client.publishJSON({
      url,
      body: { order: 42, items: ["a", "b"] },
      headers: { "X-Tenant": "acme", "Authorization": "Bearer for-the-destination" },
      retries: 2,
      delay: "1s",
      deduplicationId: "order-42-created",
      callback: `${callbacks.url}/callback`,
      failureCallback: `${callbacks.url}/failure`,
      method: "PUT",
      timeout: "10s",
      label: "orders",
    });
    expect(result.messageId).toMatch(/^msg_/);
    expect(result.url).toBe(url);
    expect(result.deduplicated).toBe(false);

    const [got] = await target.waitFor(1);
    expect(got!.method).toBe("PUT");
    expect(got!.path).toBe("/orders/created?tenant=acme");
    expect(JSON.parse(got!.body.toString())).toEqual({ order: 42, items: ["a", "b"] });
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["x-tenant"]).toBe("acme");
    expect(got!.headers.authorization).toBe("Bearer for-the-destination");
    expect(got!.headers["upstash-message-id"]).toBe(result.messageId);
    expect(got!.headers["upstash-retried"]).toBe("0");
    expect(signatureOf(got!)).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(got!.headers["user-agent"]).toBe("Upstash-QStash");
    // Configuration and the SDK's own headers stay with Dispatch.
    expect(got!.headers["upstash-forward-x-tenant"]).toBeUndefined();
    expect(got!.headers["upstash-retries"]).toBeUndefined();
    expect(got!.headers["upstash-telemetry-sdk"]).toBeUndefined();
  });

  it("publish with a raw body and a content type delivers the bytes as they were sent", async () => {
    const target = await destination();
    const result = await client.publish({
      url: `${target.url}/raw`,
      body: "line one\nline two",
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
    expect(result.messageId).toMatch(/^msg_/);

    const [got] = await target.waitFor(1);
    expect(got!.method).toBe("POST");
    expect(got!.path).toBe("/raw");
    expect(got!.body.toString()).toBe("line one\nline two");
    expect(got!.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(got!.headers["upstash-message-id"]).toBe(result.messageId);
    expect(got!.headers["upstash-retried"]).toBe("0");
    expect(got!.headers["upstash-signature"]).toBeTruthy();
    expect(got!.headers["user-agent"]).toBe("Upstash-QStash");
  });

  it("calls the callback URL with the destination's response after a delivery", async () => {
    const target = await destination(() => ({ status: 201, body: "created" }));
    const callbacks = await destination();
    const result = await client.publishJSON({
      url: `${target.url}/work`,
      body: { job: 1 },
      callback: `${callbacks.url}/callback`,
      failureCallback: `${callbacks.url}/failure`,
    });

    const [callback] = await callbacks.waitFor(1);
    expect(callback!.path).toBe("/callback");
    expect(callback!.headers["user-agent"]).toBe("Upstash-QStash");
    const payload = JSON.parse(callback!.body.toString());
    expect(payload).toMatchObject({ status: 201, sourceMessageId: result.messageId, url: `${target.url}/work` });
    expect(Buffer.from(payload.body, "base64").toString()).toBe("created");
    expect(Buffer.from(payload.sourceBody, "base64").toString()).toBe('{"job":1}');
    // The callback is itself a signed message to the callback URL.
    await expect(
      signatureReceiver().verify({
        signature: signatureOf(callback!),
        body: callback!.body.toString(),
        url: `${callbacks.url}/callback`,
      }),
    ).resolves.toBe(true);
    expect(target.requests).toHaveLength(1);
  });

  it("a second publish with the same deduplicationId returns the first message's id and is not delivered again", async () => {
    const target = await destination();
    const request = { url: `${target.url}/dedup`, body: { n: 1 }, deduplicationId: "same-event", delay: "1s" } as const;
    const first = await client.publishJSON(request);
    const second = await client.publishJSON({ ...request, body: { n: 2 } });
    expect(first.deduplicated).toBe(false);
    expect(second.messageId).toBe(first.messageId);
    expect(second.deduplicated).toBe(true);

    const [got] = await target.waitFor(1);
    expect(got!.headers["upstash-message-id"]).toBe(first.messageId);
    expect(JSON.parse(got!.body.toString())).toEqual({ n: 1 });
    expect(await countMessages(dispatch, { url: request.url })).toBe(1);
    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(1);
  });
});

describe("the SDK's message API", () => {
  it("messages.get returns a pending message with its destination, body, headers and schedule", async () => {
    const target = await destination();
    const before = Date.now();
    const { messageId } = await client.publishJSON({
      url: `${target.url}/later?x=1`,
      body: { hello: "world" },
      headers: { "X-Custom": "yes" },
      method: "PATCH",
      retries: 2,
      delay: "1h",
      callback: `${target.url}/callback`,
      failureCallback: `${target.url}/failure`,
      label: "billing",
    });

    const message = await client.messages.get(messageId);
    expect(message.messageId).toBe(messageId);
    expect(message.url).toBe(`${target.url}/later?x=1`);
    expect(message.method).toBe("PATCH");
    expect(message.body).toBe('{"hello":"world"}');
    expect(message.header).toMatchObject({ "X-Custom": ["yes"], "Content-Type": ["application/json"] });
    expect(message.maxRetries).toBe(2);
    expect(message.createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect(message.notBefore).toBeGreaterThanOrEqual(message.createdAt + 3_599_000);
    expect(message.callback).toBe(`${target.url}/callback`);
    expect(message.failureCallback).toBe(`${target.url}/failure`);
    expect(message.label).toBe("billing");

    await client.messages.cancel(messageId);
  });

  it("messages.get of an unknown id rejects with a 404", async () => {
    await expect(client.messages.get("msg_doesnotexist")).rejects.toMatchObject({ status: 404 });
  });

  it("messages.cancel stops a delayed message from ever being delivered", async () => {
    const target = await destination();
    const { messageId } = await client.publishJSON({ url: `${target.url}/cancelled`, body: { x: 1 }, delay: "60s" });

    const result = await client.messages.cancel(messageId);
    expect(result).toEqual({ cancelled: 1 });

    // A marker due after it has been delivered: the cancelled message came due and was not.
    await engineCycle(dispatch, "60s");
    expect(target.requests).toHaveLength(0);
    await expectUntouched(dispatch, [messageId]);
  });

  it("the deprecated messages.delete cancels a delayed message too", async () => {
    const target = await destination();
    const { messageId } = await client.publish({ url: `${target.url}/deleted`, body: "x", delay: 60 });

    await expect(client.messages.delete(messageId)).resolves.toBeUndefined();

    await engineCycle(dispatch, "60s");
    expect(target.requests).toHaveLength(0);
    await expectUntouched(dispatch, [messageId]);
  });
});

describe("the SDK's Receiver", () => {
  /** Publishes through the SDK and returns what the destination got and the URL it was sent to. */
  async function deliveredRequest(body: string) {
    const target = await destination();
    await client.publish({ url: `${target.url}/webhook?id=7`, body, headers: { "Content-Type": "application/json" } });
    const [got] = await target.waitFor(1);
    return { got: got!, url: target.url + got!.path };
  }

  it("verifies the signature of a delivered request against its exact body and URL", async () => {
    const { got, url } = await deliveredRequest('{"amount":"12.50","note":"café ✓"}');
    expect(url).toMatch(/\/webhook\?id=7$/);
    await expect(
      signatureReceiver().verify({ signature: signatureOf(got), body: got.body.toString(), url }),
    ).resolves.toBe(true);
  });

  it("rejects the signature when the body was tampered with", async () => {
    const { got, url } = await deliveredRequest('{"amount":"12.50"}');
    await expect(
      signatureReceiver().verify({ signature: signatureOf(got), body: '{"amount":"1250.00"}', url }),
    ).rejects.toThrow(SignatureError);
  });

  it("rejects the signature when it was made for another URL", async () => {
    const { got, url } = await deliveredRequest('{"amount":"12.50"}');
    await expect(
      signatureReceiver().verify({ signature: signatureOf(got), body: got.body.toString(), url: url.replace("id=7", "id=8") }),
    ).rejects.toThrow(SignatureError);
  });

  it("verifies a GET delivery against the empty body the destination receives", async () => {
    const target = await destination();
    await client.publish({ url: `${target.url}/poll`, method: "GET", body: "ignored for GET" });
    const [got] = await target.waitFor(1);
    expect(got!.method).toBe("GET");
    expect(got!.body.length).toBe(0);
    await expect(
      signatureReceiver().verify({ signature: signatureOf(got!), body: "", url: `${target.url}/poll` }),
    ).resolves.toBe(true);
  });

  it("falls back to the next signing key when the current one does not match (key rotation)", async () => {
    const { got, url } = await deliveredRequest('{"rotated":true}');
    const keys = dispatch.service.signingKeys;
    const rotated = signatureReceiver({ current: "sig_notTheKeyDispatchSignsWith", next: keys.current });
    await expect(rotated.verify({ signature: signatureOf(got), body: got.body.toString(), url })).resolves.toBe(true);
  });

  it("rejects the signature when neither key matches", async () => {
    const { got, url } = await deliveredRequest('{"x":1}');
    const strangers = signatureReceiver({ current: "sig_strangerOne", next: "sig_strangerTwo" });
    await expect(strangers.verify({ signature: signatureOf(got), body: got.body.toString(), url })).rejects.toThrow(
      SignatureError,
    );
  });
});

describe("retries in the compat dialect", () => {
  it("a destination answering 500 with retries: 1 gets exactly two attempts, then the failure callback runs", async () => {
    const target = await destination(() => ({ status: 500, body: "boom" }));
    const callbacks = await destination();
    const { messageId } = await client.publishJSON({
      url: `${target.url}/flaky`,
      body: { attempt: "me" },
      retries: 1,
      failureCallback: `${callbacks.url}/failure`,
    });

    const attempts = await target.waitFor(2);
    expect(attempts.map((r) => r.headers["upstash-retried"])).toEqual(["0", "1"]);
    expect(attempts.map((r) => r.headers["upstash-message-id"])).toEqual([messageId, messageId]);
    expect(attempts.map((r) => r.body.toString())).toEqual(['{"attempt":"me"}', '{"attempt":"me"}']);

    const [failure] = await callbacks.waitFor(1);
    expect(failure!.path).toBe("/failure");
    const payload = JSON.parse(failure!.body.toString());
    expect(payload).toMatchObject({ status: 500, retried: 1, maxRetries: 1, sourceMessageId: messageId });
    expect(Buffer.from(payload.body, "base64").toString()).toBe("boom");
    expect(payload.dlqId).toBeTruthy();

    await engineCycle(dispatch);
    expect(await attemptsOf(dispatch, [messageId])).toBe(2);
    expect(target.requests).toHaveLength(2);
    expect(callbacks.requests).toHaveLength(1);
  });
});
