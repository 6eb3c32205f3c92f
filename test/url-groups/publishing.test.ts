/**
 * Publishing to a URL group (topic) fans the message out to one independent
 * message per endpoint — own retries, own DLQ entry, own callbacks, own
 * deduplication; messages fanned out outlive their group, and a group publish
 * is validated as a whole.
 */
import { describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceivers } from "../support/receiver";
import { attemptsOf, countMessages, dlqEntries, messagesWhere } from "../support/rows";
import { useDispatch } from "../support/service";
import { byUrl, groupApi } from "./fixtures";

const dispatch = useDispatch();
const { addEndpoints, publishToGroup } = groupApi(dispatch);
const receiver = useReceivers();

describe("publishing to a URL group", () => {
  it("fans out: one message per endpoint, an array response, and every endpoint gets the body and the topic header", async () => {
    const a = await receiver();
    const b = await receiver();
    const c = await receiver();
    await addEndpoints("fanout", [
      { name: "a", url: `${a.url}/hook-a` },
      { name: "b", url: `${b.url}/hook-b?x=1` },
      { url: `${c.url}/hook-c` },
    ]);

    const response = await publishToGroup("fanout", { "Svc-Forward-X-Tenant": "acme" }, '{"order":7}');
    expect(response.status).toBe(200);
    const results = await response.json();
    expect(Array.isArray(results)).toBe(true);
    expect(results).toHaveLength(3);
    expect(results.map((r: { url: string }) => r.url).sort()).toEqual(
      [`${a.url}/hook-a`, `${b.url}/hook-b?x=1`, `${c.url}/hook-c`].sort(),
    );
    for (const result of results) {
      expect(result.messageId).toMatch(/^msg_/);
      expect(result.deduplicated).toBe(false);
    }
    expect(new Set(results.map((r: { messageId: string }) => r.messageId)).size).toBe(3);

    const idFor = (url: string) => results.find((r: { url: string }) => r.url === url).messageId;
    for (const [target, path] of [
      [a, "/hook-a"],
      [b, "/hook-b?x=1"],
      [c, "/hook-c"],
    ] as const) {
      const [got] = await target.waitFor(1);
      expect(got!.path).toBe(path);
      expect(got!.body.toString()).toBe('{"order":7}');
      expect(got!.headers["content-type"]).toBe("application/json");
      expect(got!.headers["x-tenant"]).toBe("acme");
      expect(got!.headers["svc-topic-name"]).toBe("fanout");
      expect(got!.headers["svc-message-id"]).toBe(idFor(target.url + path));
    }

    // Each fanned-out message is a message of its own, naming the group and its endpoint.
    const message = await (await dispatch.api(`/v2/messages/${idFor(`${a.url}/hook-a`)}`)).json();
    expect(message).toMatchObject({ topicName: "fanout", endpointName: "a", url: `${a.url}/hook-a` });
    // Every outcome is recorded: one attempt each, all delivered, so nothing more can go out.
    const ids = results.map((r: { messageId: string }) => r.messageId);
    await poll(async () => (await attemptsOf(dispatch, ids)) >= 3, "the three outcomes to be recorded");
    expect(await attemptsOf(dispatch, ids)).toBe(3);
    expect([a, b, c].map((r) => r.requests.length)).toEqual([1, 1, 1]);
  });

  it("one always-failing endpoint: only it retries, only it lands in the DLQ and gets a failure callback", async () => {
    const good1 = await receiver();
    const good2 = await receiver();
    const bad = await receiver(() => ({ status: 500, body: "broken" }));
    const callbacks = await receiver();
    await addEndpoints("partial-failure", [
      { name: "good-one", url: `${good1.url}/in` },
      { name: "good-two", url: `${good2.url}/in` },
      { name: "always-bad", url: `${bad.url}/in` },
    ]);

    const response = await publishToGroup("partial-failure", {
      "Svc-Retries": "2",
      "Svc-Callback": `${callbacks.url}/callback`,
      "Svc-Failure-Callback": `${callbacks.url}/failure`,
    });
    expect(response.status).toBe(200);
    const results: { messageId: string; url: string }[] = await response.json();
    expect(results).toHaveLength(3);
    const badId = results.find((r) => r.url === `${bad.url}/in`)!.messageId;

    const attempts = await bad.waitFor(3);
    expect(attempts.map((r) => r.headers["svc-retried"])).toEqual(["0", "1", "2"]);
    expect(attempts.every((r) => r.headers["svc-message-id"] === badId)).toBe(true);
    // Three final callbacks (one per endpoint) and one failure callback.
    await callbacks.waitFor(4);
    await poll(
      async () => {
        return (await countMessages(dispatch, { topicName: "partial-failure", states: ["DELIVERED", "FAILED"] })) === 3;
      },
      () => "fanned-out messages did not all finish",
    );
    expect(good1.requests).toHaveLength(1);
    expect(good2.requests).toHaveLength(1);
    expect(bad.requests).toHaveLength(3);

    const dlq = await dlqEntries(dispatch);
    expect(dlq).toHaveLength(1);
    expect(dlq[0]!.messageId).toBe(badId);
    expect(dlq[0]!.responseStatus).toBe(500);

    const failures = callbacks.requests.filter((r) => r.path === "/failure");
    expect(failures).toHaveLength(1);
    const failure = JSON.parse(failures[0]!.body.toString());
    expect(failure).toMatchObject({
      status: 500,
      retried: 2,
      maxRetries: 2,
      sourceMessageId: badId,
      topicName: "partial-failure",
      endpointName: "always-bad",
      url: `${bad.url}/in`,
      dlqId: dlq[0]!.dlqId,
    });
    expect(Buffer.from(failure.body, "base64").toString()).toBe("broken");

    const finals = callbacks.requests.filter((r) => r.path === "/callback").map((r) => JSON.parse(r.body.toString()));
    expect(finals).toHaveLength(3);
    for (const callback of finals) {
      expect(callback.topicName).toBe("partial-failure");
      expect(callback.dlqId).toBeUndefined();
    }
    expect(finals.map((cb) => cb.endpointName).sort()).toEqual(["always-bad", "good-one", "good-two"]);
    const goodCallback = finals.find((cb) => cb.endpointName === "good-one");
    expect(goodCallback).toMatchObject({ status: 200, url: `${good1.url}/in`, retried: 0 });
  });

  it("deduplication applies per endpoint message: the same id twice delivers once to each endpoint", async () => {
    const a = await receiver();
    const b = await receiver();
    await addEndpoints("dedup-group", [{ url: `${a.url}/a` }, { url: `${b.url}/b` }]);

    const headers = { "Svc-Deduplication-Id": "evt-123", "Svc-Delay": "1s" };
    const first = await publishToGroup("dedup-group", headers, '{"n":1}');
    expect(first.status).toBe(200);
    const firstResults: { messageId: string; url: string; deduplicated: boolean }[] = await first.json();
    expect(firstResults).toHaveLength(2);
    expect(firstResults.every((r) => r.deduplicated === false)).toBe(true);
    // Both endpoint messages were stored, though they share the deduplication id.
    expect(new Set(firstResults.map((r) => r.messageId)).size).toBe(2);

    const second = await publishToGroup("dedup-group", headers, '{"n":2}');
    expect(second.status).toBe(202);
    const secondResults: { messageId: string; url: string; deduplicated: boolean }[] = await second.json();
    expect(secondResults).toHaveLength(2);
    expect(secondResults.every((r) => r.deduplicated === true)).toBe(true);
    expect([...secondResults].sort(byUrl)).toEqual(
      [...firstResults].sort(byUrl).map((r) => ({ ...r, deduplicated: true })),
    );

    const [gotA] = await a.waitFor(1);
    const [gotB] = await b.waitFor(1);
    expect(gotA!.body.toString()).toBe('{"n":1}');
    expect(gotB!.body.toString()).toBe('{"n":1}');
    // The duplicates were never stored: the group's messages are the first two, each attempted once.
    const stored = await messagesWhere(dispatch, { topicName: "dedup-group" });
    expect(stored.map((row) => row.id).sort()).toEqual(firstResults.map((r) => r.messageId).sort());
    await poll(async () => (await attemptsOf(dispatch, stored.map((row) => row.id))) >= 2, "both outcomes to be recorded");
    expect(await attemptsOf(dispatch, stored.map((row) => row.id))).toBe(2);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);

    // The same id published to one of the endpoint URLs directly is a different delivery.
    const direct = await dispatch.api(`/v2/publish/${a.url}/elsewhere`, {
      method: "POST",
      headers: { "Svc-Deduplication-Id": "evt-123" },
      body: "direct",
    });
    expect(direct.status).toBe(200);
    expect((await direct.json()).deduplicated).toBe(false);
  });

  it("messages already fanned out are still delivered after the group is deleted", async () => {
    const a = await receiver();
    const b = await receiver();
    await addEndpoints("short-lived", [{ url: `${a.url}/a` }, { url: `${b.url}/b` }]);
    const response = await publishToGroup("short-lived", { "Svc-Delay": "1s" });
    expect(response.status).toBe(200);
    expect((await dispatch.api("/v2/topics/short-lived", { method: "DELETE" })).status).toBe(200);
    const [gotA] = await a.waitFor(1);
    const [gotB] = await b.waitFor(1);
    expect(gotA!.headers["svc-topic-name"]).toBe("short-lived");
    expect(gotB!.headers["svc-topic-name"]).toBe("short-lived");
  });

  it("a group publish is validated as a whole: a bad header stores no endpoint message", async () => {
    const a = await receiver();
    await addEndpoints("validated", [{ url: `${a.url}/a` }, { url: `${a.url}/b` }]);
    const response = await publishToGroup("validated", { "Svc-Retries": "many" });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(/retries/i);
    expect(await countMessages(dispatch, { topicName: "validated" })).toBe(0);
    expect(a.requests).toHaveLength(0);
  });
});
