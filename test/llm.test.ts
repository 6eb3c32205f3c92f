/**
 * The `api/llm` destination: messages go to the configured OpenAI-compatible
 * chat-completions endpoint with the configured key (unless the publisher
 * forwarded its own Authorization), and a callback is mandatory — the
 * completion comes back through it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { answerWith, fakeCompletion } from "./support/llm-provider";
import { engineCycle } from "./support/engine";
import { receiverPool, useReceiver } from "./support/receiver";
import { attemptsOf, countMessages } from "./support/rows";
import { startTestService, type TestService, useDispatch } from "./support/service";

const COMPLETION = fakeCompletion("Hello there!", "chatcmpl-123");
const REQUEST = { model: "fake-model", messages: [{ role: "user", content: "Say hello" }] };

const completion = answerWith(COMPLETION);

const provider = useReceiver(completion);
const receivers = receiverPool();
/** A receiver of its own for one test, closed after it. */
const receiver = receivers.start;

afterEach(async () => {
  provider.requests.length = 0;
  provider.respond(completion);
  await receivers.closeAll();
});
// Registered after the provider's hooks, so it starts after the provider and stops before it.
const dispatch = useDispatch(() => ({ llmBaseUrl: `${provider.url}/v1`, llmApiKey: "sk-test" }));

function publishLlm(headers: Record<string, string>, service = dispatch, path = "/v2/publish/api/llm") {
  return service.api(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(REQUEST),
  });
}

describe("api/llm", () => {
  it("without a callback is 400 and stores nothing", async () => {
    for (const headers of [{}, { "Upstash-Retries": "1" }] as Record<string, string>[]) {
      const response = await publishLlm(headers);
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatch(/callback/i);
    }
    expect(await countMessages(dispatch, { api: "llm" })).toBe(0);
    expect(provider.requests).toHaveLength(0);
  });

  it("sends the body to <base>/chat/completions with the configured key; the callback gets the completion", async () => {
    const callbacks = await receiver();
    const response = await publishLlm({ "Svc-Callback": `${callbacks.url}/llm-done`, "Svc-Callback-Forward-X-Trace": "t-1" });
    expect(response.status).toBe(200);
    const published = await response.json();
    const { messageId } = published;
    expect(messageId).toMatch(/^msg_/);
    // The provider URL is configuration: the publisher is not told where its message went.
    expect(published).not.toHaveProperty("url");

    const [call] = await provider.waitFor(1);
    expect(call!.method).toBe("POST");
    expect(call!.path).toBe("/v1/chat/completions");
    expect(call!.headers.authorization).toBe("Bearer sk-test");
    expect(call!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(call!.body.toString())).toEqual(REQUEST);
    expect(call!.headers["svc-message-id"]).toBe(messageId);

    const [callback] = await callbacks.waitFor(1);
    expect(callback!.path).toBe("/llm-done");
    expect(callback!.headers["x-trace"]).toBe("t-1");
    const payload = JSON.parse(callback!.body.toString());
    expect(payload).toMatchObject({ status: 200, sourceMessageId: messageId, retried: 0 });
    expect(JSON.parse(Buffer.from(payload.body, "base64").toString())).toEqual(COMPLETION);
    expect(JSON.parse(Buffer.from(payload.sourceBody, "base64").toString())).toEqual(REQUEST);
    expect(payload.header["Content-Type"]).toEqual(["application/json"]);

    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message.api).toBe("llm");
    await engineCycle(dispatch);
    expect(await attemptsOf(dispatch, [messageId])).toBe(1);
    expect(provider.requests).toHaveLength(1);
    expect(callbacks.requests).toHaveLength(1);
  });

  it("a forwarded Upstash-Forward-Authorization overrides the configured key (compat dialect)", async () => {
    const callbacks = await receiver();
    const response = await publishLlm({
      "Upstash-Callback": `${callbacks.url}/cb`,
      "Upstash-Forward-Authorization": "Bearer sk-from-the-publisher",
    });
    expect(response.status).toBe(200);
    const [call] = await provider.waitFor(1);
    expect(call!.headers.authorization).toBe("Bearer sk-from-the-publisher");
    expect(call!.headers["upstash-message-id"]).toBeTruthy();
    const [callback] = await callbacks.waitFor(1);
    expect(JSON.parse(Buffer.from(JSON.parse(callback!.body.toString()).body, "base64").toString())).toEqual(COMPLETION);
  });

  it("a forwarded Svc-Forward-Authorization overrides the configured key (native dialect)", async () => {
    const callbacks = await receiver();
    const response = await publishLlm({
      "Svc-Callback": `${callbacks.url}/cb`,
      "Svc-Forward-Authorization": "Bearer sk-native",
    });
    expect(response.status).toBe(200);
    const [call] = await provider.waitFor(1);
    expect(call!.headers.authorization).toBe("Bearer sk-native");
    await callbacks.waitFor(1);
  });

  it("forwarded hop headers are dropped; the configured key and other forwarded headers still go", async () => {
    const callbacks = await receiver();
    const response = await publishLlm({
      "Upstash-Callback": `${callbacks.url}/cb`,
      "Upstash-Forward-Content-Length": "1",
      "Upstash-Forward-Transfer-Encoding": "chunked",
      "Upstash-Forward-OpenAI-Organization": "org-1",
    });
    expect(response.status).toBe(200);
    const [call] = await provider.waitFor(1);
    expect(JSON.parse(call!.body.toString())).toEqual(REQUEST);
    expect(call!.headers).toMatchObject({
      authorization: "Bearer sk-test",
      "openai-organization": "org-1",
      "content-length": String(call!.body.length),
    });
    expect(call!.headers["transfer-encoding"]).toBeUndefined();
    const [callback] = await callbacks.waitFor(1);
    expect(JSON.parse(callback!.body.toString())).toMatchObject({ status: 200, retried: 0 });
  });

  it("a provider error is retried; the callback carries the final completion", async () => {
    provider.respond((_request, index) =>
      index === 0
        ? { status: 429, headers: { "Content-Type": "application/json", "X-Ratelimit-Reset-Requests": "1s" }, body: '{"error":"slow down"}' }
        : completion(_request, index),
    );
    const callbacks = await receiver();
    const response = await publishLlm({ "Svc-Callback": `${callbacks.url}/cb`, "Svc-Retries": "2" });
    expect(response.status).toBe(200);
    const { messageId } = await response.json();
    await provider.waitFor(2);
    expect(provider.requests.map((r) => r.headers["svc-retried"])).toEqual(["0", "1"]);
    const [callback] = await callbacks.waitFor(1);
    const payload = JSON.parse(callback!.body.toString());
    expect(payload).toMatchObject({ status: 200, retried: 1, maxRetries: 2, sourceMessageId: messageId });
    expect(JSON.parse(Buffer.from(payload.body, "base64").toString())).toEqual(COMPLETION);
    await engineCycle(dispatch);
    expect(await attemptsOf(dispatch, [messageId])).toBe(2);
    expect(callbacks.requests).toHaveLength(1);
  });

  it("can be enqueued: /v2/enqueue/{queue}/api/llm", async () => {
    const callbacks = await receiver();
    const response = await publishLlm({ "Svc-Callback": `${callbacks.url}/cb` }, dispatch, "/v2/enqueue/llm-queue/api/llm");
    expect(response.status).toBe(200);
    const { messageId } = await response.json();
    const [call] = await provider.waitFor(1);
    expect(call!.path).toBe("/v1/chat/completions");
    expect(call!.headers.authorization).toBe("Bearer sk-test");
    await callbacks.waitFor(1);
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message).toMatchObject({ api: "llm", queueName: "llm-queue" });
  });
});

describe("api/llm configuration", () => {
  it("without an LLM base URL configured, a publish to api/llm is 400 with a clear error", async () => {
    const unconfigured = await startTestService();
    try {
      const callbacks = await receiver();
      const response = await publishLlm({ "Svc-Callback": `${callbacks.url}/cb` }, unconfigured);
      expect(response.status).toBe(400);
      const { error } = await response.json();
      expect(error).toMatch(/api\/llm/);
      expect(error).toMatch(/not configured/);
      expect(error).toMatch(/DISPATCH_LLM_BASE_URL/);
      expect(await countMessages(unconfigured)).toBe(0);
    } finally {
      await unconfigured.stop();
    }
  });

  it("without an API key configured, no Authorization is added (a base URL with a trailing slash works)", async () => {
    const keyless = await startTestService({ llmBaseUrl: `${provider.url}/v1/`, llmApiKey: null });
    try {
      const callbacks = await receiver();
      const response = await publishLlm({ "Svc-Callback": `${callbacks.url}/cb` }, keyless);
      expect(response.status).toBe(200);
      const [call] = await provider.waitFor(1);
      expect(call!.path).toBe("/v1/chat/completions");
      expect(call!.headers.authorization).toBeUndefined();
      await callbacks.waitFor(1);
    } finally {
      await keyless.stop();
    }
  });
});
