/**
 * Redaction (`Redact-Fields`): what a message asks to hide is shown as
 * `REDACTED:<hash>` by every API that reads it back — the message, the logs
 * and events, the DLQ list and entry, and the callback messages that carry
 * it — while its destination, its callbacks and a DLQ retry get the
 * originals. Checked with raw headers and with the official SDK's `redact`
 * option; base64 in a response is decoded before looking for a secret.
 */
import { createHash } from "node:crypto";
import { Client } from "@upstash/qstash";
import { beforeAll, describe, expect, it } from "vitest";
import { expectHidden, REDACTED } from "./support/hidden";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { countMessages, storedMessage } from "./support/rows";
import { TEST_TOKEN, useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver((req) => (req.path.startsWith("/fail") ? { status: 500, body: "no" } : { status: 200, body: "ok" }));
let client: Client;

beforeAll(async () => {
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});

const publish = (path: string, headers: Record<string, string>, body = "the secret body 4711") =>
  dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body });

async function publishOk(path: string, headers: Record<string, string>, body?: string): Promise<string> {
  const response = await publish(path, headers, body);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()).messageId;
}

/** The log entries of message `id` (both log routes), once `state` is among them. */
async function logsOf(id: string, state = "DELIVERED") {
  const logs = await poll(async () => {
    const page = (await (await dispatch.api(`/v2/logs?messageId=${id}`)).json()).logs as Record<string, any>[];
    return page.some((log) => log.state === state) && page;
  }, `message ${id} to reach ${state}`);
  const events = (await (await dispatch.api(`/v2/events?messageId=${id}`)).json()).events;
  return { logs, events };
}

const received = (path: string) => receiver.requests.filter((request) => request.path === path);

async function receivedAt(path: string, count = 1) {
  await poll(() => received(path).length >= count, `${count} request(s) to ${path}`);
  expect(received(path)).toHaveLength(count);
  return received(path);
}

describe("Redact-Fields as raw headers", () => {
  it("hides the body and the named header in the message, the logs and the events; the receiver gets the originals", async () => {
    const id = await publishOk("/raw", {
      "Upstash-Redact-Fields": "body,header[Authorization]",
      "Upstash-Forward-Authorization": "Bearer token-4711",
      "Upstash-Forward-X-Public": "visible-value",
    });
    const { logs, events } = await logsOf(id);
    const [got] = await receivedAt("/raw");
    expect(got!.body.toString()).toBe("the secret body 4711");
    expect(got!.headers.authorization).toBe("Bearer token-4711");

    const message = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(message.body).toMatch(REDACTED);
    expect(message.header.Authorization).toEqual([expect.stringMatching(REDACTED)]);
    expect(message.header["X-Public"]).toEqual(["visible-value"]);
    expectHidden(message, "secret body", "token-4711");

    expect(logs.map((log) => log.state)).toEqual(expect.arrayContaining(["CREATED", "ACTIVE", "DELIVERED"]));
    for (const log of [...logs, ...events]) {
      // Logs show bodies base64: a hidden body is the base64 of its redacted form.
      expect(Buffer.from(log.body, "base64").toString()).toMatch(REDACTED);
      expect(log.header.Authorization).toEqual([expect.stringMatching(REDACTED)]);
      expect(log.header["X-Public"]).toEqual(["visible-value"]);
      expect(log.responseBody === undefined || Buffer.from(log.responseBody, "base64").toString() === "ok").toBe(true);
    }
    expectHidden({ logs, events }, "secret body", "token-4711");
  });

  it("reads header and headers, body in any case, and names headers case-insensitively", async () => {
    const id = await publishOk("/spellings", {
      "Upstash-Redact-Fields": " BODY , headers[x-one], Header[X-TWO] ",
      "Upstash-Forward-X-One": "first-secret",
      "Upstash-Forward-X-Two": "second-secret",
      "Upstash-Forward-X-Three": "third-visible",
    });
    const message = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(message.body).toMatch(REDACTED);
    expect(message.header["X-One"]).toEqual([expect.stringMatching(REDACTED)]);
    expect(message.header["X-Two"]).toEqual([expect.stringMatching(REDACTED)]);
    expect(message.header["X-Three"]).toEqual(["third-visible"]);
    const row = await storedMessage(dispatch, id);
    expect(row!.redactFields).toEqual(["body", "header[x-one]", "header[x-two]"]);
  });

  it("header hides every header, the content type and the headers the callbacks forward; the body stays", async () => {
    const id = await publishOk(
      "/all-headers",
      {
        "Upstash-Redact-Fields": "headers",
        "Content-Type": "text/x-private",
        "Upstash-Forward-X-A": "a-secret",
        "Upstash-Callback": `${receiver.url}/callback-all`,
        "Upstash-Callback-Forward-Authorization": "Bearer callback-secret",
        "Upstash-Callback-Retries": "1",
      },
      "a visible body",
    );
    const message = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(message.body).toBe("a visible body");
    expect(message.header["X-A"]).toEqual([expect.stringMatching(REDACTED)]);
    expect(message.header["Content-Type"]).toEqual([expect.stringMatching(REDACTED)]);
    expect(message.callbackHeader["Upstash-Forward-Authorization"]).toEqual([expect.stringMatching(REDACTED)]);
    expect(message.callbackHeader["Upstash-Retries"]).toEqual(["1"]);
    expectHidden(message, "a-secret", "text/x-private", "callback-secret");
    const [callback] = await receivedAt("/callback-all");
    expect(callback!.headers.authorization).toBe("Bearer callback-secret");
  });

  it("refuses an unknown field with a 400 naming the header, and stores nothing", async () => {
    const count = () => countMessages(dispatch);
    const before = await count();
    for (const fields of ["bodies", "header[]", "body[x]", "header[a b]", "headers[x", "url"]) {
      const response = await publish("/refused", { "Upstash-Redact-Fields": fields });
      expect(response.status, fields).toBe(400);
      expect((await response.json()).error).toMatch(/upstash-redact-fields/);
    }
    expect(await count()).toBe(before);
  });

  it("shows equal values as equal hashes, keyed: not the bare SHA-256 of the value", async () => {
    const headers = { "Upstash-Redact-Fields": "body,header[x-key]", "Upstash-Forward-X-Key": "same-key" };
    const [a, b] = [await publishOk("/same", headers, "same body"), await publishOk("/same", headers, "same body")];
    const [first, second] = await Promise.all([a, b].map(async (id) => (await dispatch.api(`/v2/messages/${id}`)).json()));
    expect(first.body).toMatch(REDACTED);
    expect(first.body).toBe(second.body);
    expect(first.header["X-Key"]).toEqual(second.header["X-Key"]);
    expect(first.body).not.toBe(`REDACTED:${createHash("sha256").update("same body").digest("hex")}`);
    expect(first.header["X-Key"][0]).not.toContain(createHash("sha256").update("same-key").digest("hex"));
  });

  it("reads Svc-Redact-Fields in the native dialect", async () => {
    const id = await publishOk("/native", { "Svc-Redact-Fields": "body,header[x-token]", "Svc-Forward-X-Token": "native-secret" });
    const { logs } = await logsOf(id);
    expectHidden(logs, "secret body", "native-secret");
    const [got] = await receivedAt("/native");
    expect(got!.headers["x-token"]).toBe("native-secret");
  });
});

describe("the DLQ", () => {
  it("hides in the list and the entry; a retry delivers the originals and stays hidden", async () => {
    const id = await publishOk("/fail-dlq", {
      "Upstash-Redact-Fields": "body,header[authorization]",
      "Upstash-Forward-Authorization": "Bearer dlq-secret",
      "Upstash-Retries": "0",
    });
    await logsOf(id, "FAILED");
    const list = await (await dispatch.api("/v2/dlq")).json();
    const entry = list.messages.find((m: { messageId: string }) => m.messageId === id);
    expect(entry.body).toMatch(REDACTED);
    expectHidden(list, "secret body", "dlq-secret");
    const one = await (await dispatch.api(`/v2/dlq/${entry.dlqId}`)).json();
    expect(one.header.Authorization).toEqual([expect.stringMatching(REDACTED)]);
    expectHidden(one, "secret body", "dlq-secret");

    const retried = await (await dispatch.api(`/v2/dlq/retry/${entry.dlqId}`, { method: "POST" })).json();
    const deliveries = await receivedAt("/fail-dlq", 2);
    expect(deliveries.map((request) => request.body.toString())).toEqual(["the secret body 4711", "the secret body 4711"]);
    expect(deliveries[1]!.headers.authorization).toBe("Bearer dlq-secret");
    const again = await (await dispatch.api(`/v2/messages/${retried.messageId}`)).json();
    expect(again.body).toMatch(REDACTED);
    expectHidden(again, "secret body", "dlq-secret");
  });
});

describe("callbacks", () => {
  it("get the source's body and headers as delivered; their messages show them hidden, the response visible", async () => {
    const callbackUrl = `${receiver.url}/callback-source`;
    const id = await publishOk("/with-callback", {
      "Upstash-Redact-Fields": "body,header[authorization]",
      "Upstash-Forward-Authorization": "Bearer source-secret",
      "Upstash-Callback": callbackUrl,
    });
    const [callback] = await receivedAt("/callback-source");
    const envelope = JSON.parse(callback!.body.toString());
    expect(Buffer.from(envelope.sourceBody, "base64").toString()).toBe("the secret body 4711");
    expect(JSON.stringify(envelope.sourceHeader)).toContain("Bearer source-secret");

    const callbackId = callback!.headers["upstash-message-id"] as string;
    const { logs } = await logsOf(callbackId);
    const shown = JSON.parse(Buffer.from(logs[0]!.body, "base64").toString());
    expect(shown.sourceMessageId).toBe(id);
    expect(shown.status).toBe(200);
    expect(Buffer.from(shown.body, "base64").toString()).toBe("ok");
    expect(Buffer.from(shown.sourceBody, "base64").toString()).toMatch(REDACTED);
    expectHidden(logs, "secret body", "source-secret");
    expectHidden(await (await dispatch.api(`/v2/messages/${callbackId}`)).json(), "secret body", "source-secret");
  });
});

describe("the official SDK's redact option", () => {
  /** The SDK's log entry of message `id` (its own E2E checks read `logs[0]`). */
  function sdkLog(id: string) {
    return poll(async () => {
      const { logs } = await client.logs({ filter: { messageId: id } });
      return logs.some((log) => log.state === "DELIVERED") && logs;
    }, `a delivered log of ${id}`);
  }
  const headerValues = (log: { header?: Record<string, unknown> }) => Object.values(log.header ?? {}).join(",");

  it("body: true", async () => {
    const { messageId } = await client.publishJSON({
      url: `${receiver.url}/sdk-body`,
      body: { secret: "super-secret-value" },
      redact: { body: true },
    });
    const logs = await sdkLog(messageId);
    for (const log of logs) expect(Buffer.from(log.body ?? "", "base64").toString()).toMatch(REDACTED);
    expectHidden(logs, "super-secret-value");
    expectHidden(await client.messages.get(messageId), "super-secret-value");
    const [got] = await receivedAt("/sdk-body");
    expect(JSON.parse(got!.body.toString())).toEqual({ secret: "super-secret-value" });
  });

  it("header: true", async () => {
    const { messageId } = await client.publishJSON({
      url: `${receiver.url}/sdk-headers`,
      body: { hello: "world" },
      headers: { "X-Custom-Secret": "header-secret-value" },
      redact: { header: true },
    });
    const logs = await sdkLog(messageId);
    expect(headerValues(logs[0]!)).not.toContain("header-secret-value");
    expect(Buffer.from(logs[0]!.body ?? "", "base64").toString()).toBe('{"hello":"world"}');
    expectHidden(logs, "header-secret-value");
    expect((await receivedAt("/sdk-headers"))[0]!.headers["x-custom-secret"]).toBe("header-secret-value");
  });

  it("header: [name] and body together, through a failure into the DLQ", async () => {
    const { messageId } = await client.publishJSON({
      url: `${receiver.url}/fail-sdk`,
      body: { password: "my-password-123" },
      headers: { Authorization: "Bearer token-to-redact", "X-Public-Header": "should-be-visible" },
      redact: { body: true, header: ["Authorization"] },
      retries: 0,
    });
    await logsOf(messageId, "FAILED");
    const { logs } = await client.logs({ filter: { messageId } });
    expect(headerValues(logs[0]!)).not.toContain("token-to-redact");
    expect(headerValues(logs[0]!)).toContain("should-be-visible");
    expectHidden(logs, "my-password-123", "token-to-redact");
    const { messages } = await client.dlq.listMessages({ filter: { messageId } });
    expect(messages).toHaveLength(1);
    expectHidden(messages, "my-password-123", "token-to-redact");
    expect((await receivedAt("/fail-sdk"))[0]!.headers.authorization).toBe("Bearer token-to-redact");
  });
});
