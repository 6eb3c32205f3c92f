/**
 * `POST /v2/batch`: many publishes in one request — URLs, URL groups, queues
 * and api/llm — answered in input order, stored all together or not at all.
 */
import { afterEach, describe, expect, it } from "vitest";
import { answerWith, fakeCompletion } from "./support/llm-provider";
import { poll } from "./support/poll";
import { receiverPool, useReceiver } from "./support/receiver";
import { attemptsOf, countMessages } from "./support/rows";
import { useDispatch } from "./support/service";

const COMPLETION = fakeCompletion("hi from batch", "chatcmpl-batch");

const provider = useReceiver(answerWith(COMPLETION));
const receivers = receiverPool();
/** A receiver of its own for one test, closed after it. */
const receiver = receivers.start;

afterEach(async () => {
  provider.requests.length = 0;
  await receivers.closeAll();
});
// Registered after the provider's hooks, so it starts after the provider and stops before it.
const dispatch = useDispatch(() => ({ llmBaseUrl: `${provider.url}/v1`, llmApiKey: "sk-test" }));

const batch = (items: unknown) =>
  dispatch.api("/v2/batch", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: typeof items === "string" ? items : JSON.stringify(items),
  });

async function addEndpoints(group: string, endpoints: { url: string; name?: string }[]) {
  const response = await dispatch.api(`/v2/topics/${group}/endpoints`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ endpoints }),
  });
  expect(response.status).toBe(200);
}

const messageCount = () => countMessages(dispatch);

describe("POST /v2/batch", () => {
  it("mixes a URL, a URL group, a queue and api/llm; the response is aligned with the input and each is delivered", async () => {
    const single = await receiver();
    const groupA = await receiver();
    const groupB = await receiver();
    const queued = await receiver();
    const callbacks = await receiver();
    await addEndpoints("batch-group", [
      { name: "a", url: `${groupA.url}/a` },
      { name: "b", url: `${groupB.url}/b` },
    ]);
    const llmRequest = { model: "fake-model", messages: [{ role: "user", content: "hello" }] };

    const response = await batch([
      {
        destination: `${single.url}/single?x=1`,
        headers: { "Content-Type": "text/plain", "Svc-Forward-X-Item": "url", "Svc-Method": "PUT" },
        body: "one",
      },
      { destination: "batch-group", headers: { "Content-Type": "text/plain" }, body: "two" },
      { destination: `${queued.url}/queued`, queue: "batch-queue", headers: { "Content-Type": "text/plain" }, body: "three" },
      {
        destination: "api/llm",
        headers: { "Content-Type": "application/json", "Svc-Callback": `${callbacks.url}/llm-callback` },
        body: JSON.stringify(llmRequest),
      },
    ]);
    expect(response.status, await response.clone().text()).toBe(200);
    const results = await response.json();
    expect(results).toHaveLength(4);

    expect(Array.isArray(results[0])).toBe(false);
    expect(results[0]).toMatchObject({ url: `${single.url}/single?x=1`, deduplicated: false });
    expect(results[0].messageId).toMatch(/^msg_/);

    expect(Array.isArray(results[1])).toBe(true);
    expect(results[1]).toHaveLength(2);
    expect(results[1].map((r: { url: string }) => r.url).sort()).toEqual([`${groupA.url}/a`, `${groupB.url}/b`].sort());
    for (const r of results[1]) expect(r.messageId).toMatch(/^msg_/);

    expect(results[2]).toMatchObject({ url: `${queued.url}/queued`, deduplicated: false });
    expect(results[3].messageId).toMatch(/^msg_/);
    const ids = [results[0], ...results[1], results[2], results[3]].map((r: { messageId: string }) => r.messageId);
    expect(new Set(ids).size).toBe(5);

    const [got] = await single.waitFor(1);
    expect(got!.method).toBe("PUT");
    expect(got!.path).toBe("/single?x=1");
    expect(got!.body.toString()).toBe("one");
    expect(got!.headers["x-item"]).toBe("url");
    expect(got!.headers["svc-message-id"]).toBe(results[0].messageId);

    for (const target of [groupA, groupB]) {
      const [fanned] = await target.waitFor(1);
      expect(fanned!.body.toString()).toBe("two");
      expect(fanned!.headers["svc-topic-name"]).toBe("batch-group");
    }

    const [inQueue] = await queued.waitFor(1);
    expect(inQueue!.body.toString()).toBe("three");
    expect(inQueue!.headers["svc-message-id"]).toBe(results[2].messageId);
    const queueMessage = await (await dispatch.api(`/v2/messages/${results[2].messageId}`)).json();
    expect(queueMessage.queueName).toBe("batch-queue");
    const queue = await dispatch.api("/v2/queues/batch-queue");
    expect(queue.status).toBe(200);
    expect((await queue.json()).parallelism).toBe(1);

    const [llm] = await provider.waitFor(1);
    expect(llm!.method).toBe("POST");
    expect(llm!.path).toBe("/v1/chat/completions");
    expect(llm!.headers.authorization).toBe("Bearer sk-test");
    expect(JSON.parse(llm!.body.toString())).toEqual(llmRequest);
    const [callback] = await callbacks.waitFor(1);
    const payload = JSON.parse(callback!.body.toString());
    expect(payload.sourceMessageId).toBe(results[3].messageId);
    expect(JSON.parse(Buffer.from(payload.body, "base64").toString())).toEqual(COMPLETION);

    // Every outcome is recorded, one attempt each: nothing more can go out.
    const delivered = ids.slice(0, 4);
    await poll(async () => (await attemptsOf(dispatch, delivered)) >= 4, "the four outcomes to be recorded");
    expect(await attemptsOf(dispatch, delivered)).toBe(4);
    expect([single, groupA, groupB, queued].map((r) => r.requests.length)).toEqual([1, 1, 1, 1]);
  });

  it("a single-item batch still answers with an array", async () => {
    const target = await receiver();
    const response = await batch([{ destination: `${target.url}/only`, body: "solo" }]);
    expect(response.status).toBe(200);
    const results = await response.json();
    expect(Array.isArray(results)).toBe(true);
    expect(results).toHaveLength(1);
    expect(results[0].url).toBe(`${target.url}/only`);
    const [got] = await target.waitFor(1);
    expect(got!.body.toString()).toBe("solo");
  });

  it("several items into one queue keep their batch order", async () => {
    const target = await receiver();
    const items = [0, 1, 2, 3, 4].map((n) => ({ destination: `${target.url}/ordered`, queue: "batch-ordered", body: `${n}` }));
    const response = await batch(items);
    expect(response.status).toBe(200);
    await target.waitFor(5);
    expect(target.requests.map((r) => r.body.toString())).toEqual(["0", "1", "2", "3", "4"]);
  });

  it("duplicates within one batch are deduplicated against the first item", async () => {
    const target = await receiver();
    const item = { destination: `${target.url}/dedup`, headers: { "Svc-Deduplication-Id": "batch-dup" }, body: "x" };
    const response = await batch([item, { ...item, body: "y" }]);
    expect(response.status).toBe(200);
    const [first, second] = await response.json();
    expect(first.deduplicated).toBe(false);
    expect(second).toEqual({ messageId: first.messageId, url: first.url, deduplicated: true });
    const [got] = await target.waitFor(1);
    expect(got!.body.toString()).toBe("x");
    // The duplicate was never stored; the one message was attempted once.
    await poll(async () => (await attemptsOf(dispatch, [first.messageId])) >= 1, "the outcome to be recorded");
    expect(await attemptsOf(dispatch, [first.messageId])).toBe(1);
    expect(target.requests).toHaveLength(1);
  });

  describe("an invalid item fails the whole batch and stores nothing", () => {
    it.each([
      ["a bad header value", { destination: "URL", headers: { "Svc-Retries": "lots" } }, 400, /retries/i],
      ["a bad delay", { destination: "URL", headers: { "Svc-Delay": "soon" } }, 400, /delay/i],
      ["a bad callback URL", { destination: "URL", headers: { "Svc-Callback": "not-a-url" } }, 400, /callback/i],
      ["a destination without scheme", { destination: "example.com/hook" }, 400, /destination/i],
      ["an invalid queue name", { destination: "URL", queue: "bad queue" }, 400, /queue/i],
      ["an unknown URL group", { destination: "no-such-group" }, 404, /no-such-group/],
      ["api/llm without a callback", { destination: "api/llm", body: "{}" }, 400, /callback/i],
    ] as const)("%s", async (_name, bad, status, error) => {
      const target = await receiver();
      const before = await messageCount();
      const good = { destination: `${target.url}/good`, queue: "never-created", body: "good" };
      const badItem = { ...bad, destination: bad.destination === "URL" ? `${target.url}/bad` : bad.destination };
      const response = await batch([good, badItem, { destination: `${target.url}/after`, body: "after" }]);
      expect(response.status).toBe(status);
      expect((await response.json()).error).toMatch(error);

      expect(await messageCount()).toBe(before);
      expect((await dispatch.api("/v2/queues/never-created")).status).toBe(404);
      expect(target.requests).toHaveLength(0);
    });

    it("a body that is not an array of items is 400", async () => {
      const before = await messageCount();
      for (const body of ["not json", "{}", "[]", JSON.stringify([{ body: "no destination" }]), JSON.stringify([{ destination: 5 }])]) {
        const response = await batch(body);
        expect(response.status, body).toBe(400);
        expect(typeof (await response.json()).error).toBe("string");
      }
      expect(await messageCount()).toBe(before);
    });
  });
});
