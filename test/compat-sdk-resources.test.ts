/**
 * The official `@upstash/qstash` SDK, unmodified, driving Dispatch's
 * resources: URL groups (client.urlGroups), publishing to a group, queues
 * (client.queue), batchJSON mixing every destination kind, and api/llm.
 */
import { Client } from "@upstash/qstash";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { answerWith, fakeCompletion } from "./support/llm-provider";
import { engineCycle, expectUntouched } from "./support/engine";
import { poll } from "./support/poll";
import { receiverPool, useReceiver } from "./support/receiver";
import { countMessages, messageState, storedMessage } from "./support/rows";
import { TEST_TOKEN, useDispatch } from "./support/service";

const COMPLETION = fakeCompletion("from the fake provider", "chatcmpl-sdk");

let client: Client;
const provider = useReceiver(answerWith(COMPLETION));
const receivers = receiverPool();
/** A receiver of its own for one test, closed after it. */
const destination = receivers.start;

afterEach(async () => {
  provider.requests.length = 0;
  await receivers.closeAll();
});
// Registered after the provider's hooks, so it starts after the provider and stops before it.
const dispatch = useDispatch(() => ({ llmBaseUrl: `${provider.url}/v1`, llmApiKey: "sk-test" }));
beforeAll(() => {
  // devMode: false keeps the SDK from looking for (or downloading) its local dev server.
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});

type Result = { messageId: string; url?: string; deduplicated?: boolean };

const byUrl = (a: { url?: string }, b: { url?: string }) => ((a.url ?? "") < (b.url ?? "") ? -1 : 1);

describe("client.urlGroups", () => {
  it("addEndpoints, get, list, removeEndpoints (by name and by url) and delete", async () => {
    const before = Date.now();
    await client.urlGroups.addEndpoints({
      name: "sdk-group",
      endpoints: [
        { name: "first", url: "http://127.0.0.1:9/first" },
        { url: "http://127.0.0.1:9/second" },
        { name: "third", url: "http://127.0.0.1:9/third" },
      ],
    });
    const group = await client.urlGroups.get("sdk-group");
    expect(group.name).toBe("sdk-group");
    expect(group.createdAt).toBeGreaterThanOrEqual(before - 5000);
    expect(group.updatedAt).toBeGreaterThanOrEqual(group.createdAt);
    expect([...group.endpoints].sort(byUrl)).toEqual([
      { name: "first", url: "http://127.0.0.1:9/first" },
      { url: "http://127.0.0.1:9/second" },
      { name: "third", url: "http://127.0.0.1:9/third" },
    ]);

    await client.urlGroups.addEndpoints({ name: "sdk-other", endpoints: [{ url: "http://127.0.0.1:9/other" }] });
    const list = await client.urlGroups.list();
    expect(list.map((g) => g.name)).toEqual(expect.arrayContaining(["sdk-group", "sdk-other"]));
    expect(list.find((g) => g.name === "sdk-other")!.endpoints).toEqual([{ url: "http://127.0.0.1:9/other" }]);

    await client.urlGroups.removeEndpoints({ name: "sdk-group", endpoints: [{ name: "first" }] });
    await client.urlGroups.removeEndpoints({ name: "sdk-group", endpoints: [{ url: "http://127.0.0.1:9/second" }] });
    expect((await client.urlGroups.get("sdk-group")).endpoints).toEqual([
      { name: "third", url: "http://127.0.0.1:9/third" },
    ]);

    await client.urlGroups.delete("sdk-group");
    await expect(client.urlGroups.get("sdk-group")).rejects.toMatchObject({ status: 404 });
    expect((await client.urlGroups.list()).map((g) => g.name)).not.toContain("sdk-group");
    // Removing the last endpoint deletes the group too.
    await client.urlGroups.removeEndpoints({ name: "sdk-other", endpoints: [{ url: "http://127.0.0.1:9/other" }] });
    await expect(client.urlGroups.get("sdk-other")).rejects.toMatchObject({ status: 404 });
  });

  it("errors surface as SDK errors: unknown group 404, invalid name 400; deleting an unknown group succeeds", async () => {
    await expect(client.urlGroups.get("sdk-missing")).rejects.toMatchObject({ status: 404 });
    await expect(client.urlGroups.delete("sdk-missing")).resolves.toBeUndefined();
    await expect(
      client.urlGroups.addEndpoints({ name: "bad name!", endpoints: [{ url: "http://127.0.0.1:9/x" }] }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(client.publishJSON({ urlGroup: "sdk-missing", body: {} })).rejects.toMatchObject({ status: 404 });
  });

  it("publishJSON({ urlGroup }) fans out: an array result, one delivery per endpoint with Upstash-Topic-Name", async () => {
    const a = await destination();
    const b = await destination(() => ({ status: 202, body: "accepted" }));
    const callbacks = await destination();
    await client.urlGroups.addEndpoints({
      name: "sdk-fanout",
      endpoints: [
        { name: "alpha", url: `${a.url}/alpha` },
        { name: "beta", url: `${b.url}/beta` },
      ],
    });

    const results = (await client.publishJSON({
      urlGroup: "sdk-fanout",
      body: { event: "signup", user: 1 },
      callback: `${callbacks.url}/callback`,
    })) as unknown as Result[];
    expect(Array.isArray(results)).toBe(true);
    expect(results).toHaveLength(2);
    expect(results.map((r) => r.url).sort()).toEqual([`${a.url}/alpha`, `${b.url}/beta`].sort());
    for (const result of results) {
      expect(result.messageId).toMatch(/^msg_/);
      expect(result.deduplicated).toBe(false);
    }

    for (const [target, path] of [
      [a, "/alpha"],
      [b, "/beta"],
    ] as const) {
      const [got] = await target.waitFor(1);
      expect(got!.path).toBe(path);
      expect(JSON.parse(got!.body.toString())).toEqual({ event: "signup", user: 1 });
      expect(got!.headers["upstash-topic-name"]).toBe("sdk-fanout");
      expect(got!.headers["upstash-message-id"]).toBe(results.find((r) => r.url === target.url + path)!.messageId);
      expect(got!.headers["user-agent"]).toBe("Upstash-QStash");
    }

    await callbacks.waitFor(2);
    const payloads = callbacks.requests.map((r) => JSON.parse(r.body.toString()));
    expect(payloads.every((p) => p.topicName === "sdk-fanout")).toBe(true);
    expect(payloads.map((p) => p.endpointName).sort()).toEqual(["alpha", "beta"]);
    const beta = payloads.find((p) => p.endpointName === "beta");
    expect(beta.status).toBe(202);
    expect(Buffer.from(beta.body, "base64").toString()).toBe("accepted");

    // The SDK's message API shows the fanned-out message with its group (renamed urlGroup by the SDK).
    const alphaId = results.find((r) => r.url === `${a.url}/alpha`)!.messageId;
    const pending = await client.publishJSON({ urlGroup: "sdk-fanout", body: { later: true }, delay: "30s" });
    const pendingId = (pending as unknown as Result[])[0]!.messageId;
    const message = await client.messages.get(pendingId);
    expect(message.urlGroup).toBe("sdk-fanout");
    expect(message.endpointName).toBeTruthy();
    expect(alphaId).not.toBe(pendingId);
    for (const r of pending as unknown as Result[]) await client.messages.cancel(r.messageId);
  });
});

describe("client.queue", () => {
  it("upsert, get, list, pause, enqueueJSON while paused, resume, delete", async () => {
    const target = await destination();
    const queue = client.queue({ queueName: "sdk-queue" });
    await queue.upsert({ parallelism: 2 });
    const created = await queue.get();
    expect(created).toMatchObject({ name: "sdk-queue", parallelism: 2, paused: false, lag: 0 });
    expect(typeof created.createdAt).toBe("number");
    expect(typeof created.updatedAt).toBe("number");

    await queue.pause();
    await queue.pause();
    expect((await queue.get()).paused).toBe(true);

    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const result = await queue.enqueueJSON({ url: `${target.url}/queued`, body: { n } });
      expect(result.messageId).toMatch(/^msg_/);
      ids.push(result.messageId);
    }
    expect(await queue.get()).toMatchObject({ paused: true, lag: 3 });
    await engineCycle(dispatch);
    await expectUntouched(dispatch, ids);
    expect(target.requests).toHaveLength(0);

    const listed = await client.queue().list();
    expect(listed.find((q) => q.name === "sdk-queue")).toMatchObject({ parallelism: 2, paused: true, lag: 3 });

    await queue.resume();
    await target.waitFor(3);
    expect(target.requests.map((r) => JSON.parse(r.body.toString()).n).sort()).toEqual([0, 1, 2]);
    expect(target.requests.map((r) => r.headers["upstash-message-id"]).sort()).toEqual([...ids].sort());
    await poll(async () => (await queue.get()).lag === 0, "the queue's lag to reach 0");
    expect(await queue.get()).toMatchObject({ paused: false, lag: 0 });

    await queue.delete();
    await expect(queue.get()).rejects.toMatchObject({ status: 404 });
    expect((await client.queue().list()).map((q) => q.name)).not.toContain("sdk-queue");
  });

  it("enqueueJSON creates the queue on first use and keeps FIFO order; deleting a paused queue cancels what waits", async () => {
    const target = await destination();
    const queue = client.queue({ queueName: "sdk-auto" });
    for (let n = 0; n < 4; n++) await queue.enqueueJSON({ url: `${target.url}/auto`, body: { n } });
    await target.waitFor(4);
    expect(target.requests.map((r) => JSON.parse(r.body.toString()).n)).toEqual([0, 1, 2, 3]);
    expect(await queue.get()).toMatchObject({ name: "sdk-auto", parallelism: 1 });

    const doomed = client.queue({ queueName: "sdk-doomed" });
    await doomed.upsert({ paused: true });
    const { messageId } = await doomed.enqueueJSON({ url: `${target.url}/doomed`, body: { n: 99 } });
    await doomed.delete();
    expect(await messageState(dispatch, messageId)).toBe("CANCELED");
    await engineCycle(dispatch);
    await expectUntouched(dispatch, [messageId]);
    expect(target.requests).toHaveLength(4);
  });

  it("enqueueJSON to a URL group fans out through the queue", async () => {
    const a = await destination();
    const b = await destination();
    await client.urlGroups.addEndpoints({ name: "sdk-queued-group", endpoints: [{ url: `${a.url}/a` }, { url: `${b.url}/b` }] });
    const results = (await client
      .queue({ queueName: "sdk-group-queue" })
      .enqueueJSON({ urlGroup: "sdk-queued-group", body: { fanned: true } })) as unknown as Result[];
    expect(results).toHaveLength(2);
    for (const target of [a, b]) {
      const [got] = await target.waitFor(1);
      expect(got!.headers["upstash-topic-name"]).toBe("sdk-queued-group");
    }
  });

  it("get and pause of an unknown queue reject with 404", async () => {
    await expect(client.queue({ queueName: "sdk-nope" }).get()).rejects.toMatchObject({ status: 404 });
    await expect(client.queue({ queueName: "sdk-nope" }).pause()).rejects.toMatchObject({ status: 404 });
    await expect(client.queue({ queueName: "sdk-nope" }).resume()).rejects.toMatchObject({ status: 404 });
  });
});

describe("client.batchJSON", () => {
  it("mixes a URL, a URL group, a queue and api/llm; results are aligned and everything is delivered", async () => {
    const single = await destination();
    const groupA = await destination();
    const groupB = await destination();
    const queued = await destination();
    const callbacks = await destination();
    await client.urlGroups.addEndpoints({
      name: "sdk-batch-group",
      endpoints: [{ url: `${groupA.url}/a` }, { url: `${groupB.url}/b` }],
    });
    const chat = { model: "fake-model", messages: [{ role: "user", content: "hello" }] };

    const results = (await client.batchJSON([
      { url: `${single.url}/single`, body: { kind: "url" }, headers: { "X-Kind": "url" }, retries: 1 },
      { urlGroup: "sdk-batch-group", body: { kind: "group" } },
      { url: `${queued.url}/queued`, queueName: "sdk-batch-queue", body: { kind: "queue" } },
      { api: { name: "llm" }, body: chat, callback: `${callbacks.url}/llm` },
    ])) as unknown as (Result | Result[])[];

    expect(results).toHaveLength(4);
    const [url, group, queue, llm] = results as [Result, Result[], Result, Result];
    expect(url).toMatchObject({ url: `${single.url}/single`, deduplicated: false });
    expect(Array.isArray(group)).toBe(true);
    expect(group.map((r) => r.url).sort()).toEqual([`${groupA.url}/a`, `${groupB.url}/b`].sort());
    expect(queue).toMatchObject({ url: `${queued.url}/queued` });
    expect(llm.messageId).toMatch(/^msg_/);

    const [got] = await single.waitFor(1);
    expect(JSON.parse(got!.body.toString())).toEqual({ kind: "url" });
    expect(got!.headers["x-kind"]).toBe("url");
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["upstash-message-id"]).toBe(url.messageId);
    for (const target of [groupA, groupB]) {
      const [fanned] = await target.waitFor(1);
      expect(JSON.parse(fanned!.body.toString())).toEqual({ kind: "group" });
      expect(fanned!.headers["upstash-topic-name"]).toBe("sdk-batch-group");
    }
    const [inQueue] = await queued.waitFor(1);
    expect(JSON.parse(inQueue!.body.toString())).toEqual({ kind: "queue" });
    expect((await client.queue({ queueName: "sdk-batch-queue" }).get()).name).toBe("sdk-batch-queue");
    const stored = await storedMessage(dispatch, url.messageId);
    expect(stored!.maxRetries).toBe(1);

    const [call] = await provider.waitFor(1);
    expect(call!.path).toBe("/v1/chat/completions");
    expect(call!.headers.authorization).toBe("Bearer sk-test");
    expect(JSON.parse(call!.body.toString())).toEqual(chat);
    const [callback] = await callbacks.waitFor(1);
    const payload = JSON.parse(callback!.body.toString());
    expect(payload.sourceMessageId).toBe(llm.messageId);
    expect(JSON.parse(Buffer.from(payload.body, "base64").toString())).toEqual(COMPLETION);
  });

  it("rejects the whole batch when one item names an unknown URL group; nothing is delivered", async () => {
    const target = await destination();
    await expect(
      client.batchJSON([
        { url: `${target.url}/first`, body: { n: 1 } },
        { urlGroup: "sdk-batch-missing", body: { n: 2 } },
      ]),
    ).rejects.toMatchObject({ status: 404 });
    expect(await countMessages(dispatch, { urlLike: `${target.url}/%` })).toBe(0);
    await engineCycle(dispatch);
    expect(target.requests).toHaveLength(0);
  });
});

describe("api/llm through the SDK", () => {
  it("publishJSON({ api: { name: 'llm' } }) goes to the configured provider and the callback gets the completion", async () => {
    const callbacks = await destination();
    const chat = { model: "fake-model", messages: [{ role: "user", content: "ping" }] };
    const result = await client.publishJSON({ api: { name: "llm" }, body: chat, callback: `${callbacks.url}/cb` });
    expect(result.messageId).toMatch(/^msg_/);

    const [call] = await provider.waitFor(1);
    expect(call!.path).toBe("/v1/chat/completions");
    expect(call!.headers.authorization).toBe("Bearer sk-test");
    expect(JSON.parse(call!.body.toString())).toEqual(chat);
    const [callback] = await callbacks.waitFor(1);
    const payload = JSON.parse(callback!.body.toString());
    expect(payload).toMatchObject({ status: 200, sourceMessageId: result.messageId });
    expect(JSON.parse(Buffer.from(payload.body, "base64").toString())).toEqual(COMPLETION);
  });
});
