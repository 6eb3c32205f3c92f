/**
 * What the official Python (qstash-py 3.4) and Go (qstash-go 1.0) clients
 * send that the TypeScript client never does (docs/hosted-api.md §17), sent
 * here byte for byte as they send it, and what the hosted service's API
 * description says that Dispatch must answer. Go is not on these machines and
 * the Python client's source is not ours to copy, so the requests are written
 * out from reading them; each names the client's file and line.
 */
import { Receiver as SignatureReceiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { type Receiver, startReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

// The Python and Go clients' plain publish carries no prefixed header: the deployment's default dialect decides.
const dispatch = useDispatch({ defaultDialect: "upstash" });
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const json = (body: unknown, method = "POST"): RequestInit => ({ method, body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
/** The requests that reached `path` on the receiver. */
const arrived = (path: string) => receiver.requests.filter((request) => request.path === path);
const delivered = (path: string) => poll(() => arrived(path)[0], `a delivery to ${path}`);

describe("the Python client", () => {
  it("batch items always carry every key: \"queue\": null and \"body\": null are absent (message.py:711-718)", async () => {
    const answer = await dispatch.api("/v2/batch", json([
      { destination: `${receiver.url}/py-batch-1`, headers: { "Upstash-Retries": "0" }, body: "hi", queue: null },
      { destination: `${receiver.url}/py-batch-2`, headers: {}, body: null, queue: null },
    ]));
    expect(answer.status).toBe(200);
    const items = await answer.json();
    expect(items.map((item: { messageId: string }) => item.messageId)).toEqual([expect.stringMatching(/^msg_/), expect.stringMatching(/^msg_/)]);
    expect((await delivered("/py-batch-1")).body.toString()).toBe("hi");
    expect((await delivered("/py-batch-2")).body).toHaveLength(0);
  });

  it("a plain publish_json sends only Content-Type: delivered in the default dialect, which its Receiver verifies", async () => {
    const answer = await dispatch.api(`/v2/publish/${receiver.url}/py-plain`, json({ hello: "world" }));
    expect(answer.status).toBe(200);
    const got = await delivered("/py-plain");
    const keys = dispatch.service.signingKeys;
    const verifier = new SignatureReceiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    await expect(verifier.verify({ signature: got.headers["upstash-signature"] as string, body: got.body.toString() })).resolves.toBe(true);
    expect(got.headers["svc-signature"]).toBeUndefined();
  });

  it("headers={\"Content-Type\": ...} goes out as Upstash-Forward-Content-Type and is the message's content type (message.py:539-544)", async () => {
    await dispatch.api(`/v2/publish/${receiver.url}/py-forwarded-type`, {
      method: "POST",
      // Bytes, as httpx sends `content=`: no Content-Type of its own.
      body: Buffer.from("<a/>"),
      headers: { "Upstash-Forward-Content-Type": "application/xml", "Upstash-Forward-X-Kind": "order" },
    });
    const got = await delivered("/py-forwarded-type");
    expect(got.headers["content-type"]).toBe("application/xml");
    expect(got.headers["x-kind"]).toBe("order");
  });

  it("flow_control={\"key\": k} sends an empty value, and a limit it was not given as 0: a key without that limit (message.py:593-610)", async () => {
    for (const [path, value] of [["/py-flow-empty", ""], ["/py-flow-zero", "parallelism=0, rate=5, period=1s"]] as const) {
      const answer = await dispatch.api(`/v2/publish/${receiver.url}${path}`, {
        method: "POST",
        body: "x",
        headers: { "Upstash-Flow-Control-Key": "py-key", "Upstash-Flow-Control-Value": value },
      });
      expect(answer.status, value).toBe(200);
      await delivered(path);
    }
  });

  it("Upstash-Content-Based-Deduplication: False is read as false (message.py:584-585)", async () => {
    const send = () => dispatch.api(`/v2/publish/${receiver.url}/py-dedup`, {
      method: "POST", body: "same", headers: { "Upstash-Content-Based-Deduplication": "False" },
    });
    expect((await (await send()).json()).deduplicated).toBe(false);
    expect((await (await send()).json()).deduplicated).toBe(false);
  });
});

describe("the Go client", () => {
  it("Batch sends \"queue\": \"\" when no queue is set: no queue (messages.go:199-204)", async () => {
    const answer = await dispatch.api("/v2/batch", json([{ destination: `${receiver.url}/go-batch`, headers: { "Content-Type": "text/plain" }, body: "go", queue: "" }]));
    expect(answer.status).toBe(200);
    expect((await delivered("/go-batch")).body.toString()).toBe("go");
  });

  it("Schedules().Create and Get use /v2/Schedules (capital S, schedule.go:61, 104)", async () => {
    const created = await dispatch.api(`/v2/Schedules/${receiver.url}/go-schedule`, {
      method: "POST", body: "tick", headers: { "Upstash-Cron": "0 0 1 1 *" },
    });
    expect(created.status).toBe(200);
    const { scheduleId } = await created.json();
    const read = await dispatch.api(`/v2/Schedules/${scheduleId}`);
    expect(read.status).toBe(200);
    expect((await read.json()).scheduleId).toBe(scheduleId);
  });

  it("Queues().Upsert without Parallelism sends 0: parallelism 1 (queue.go:32-39)", async () => {
    expect((await dispatch.api("/v2/queues", json({ queueName: "go-queue", parallelism: 0, paused: false }))).status).toBe(200);
    expect((await (await dispatch.api("/v2/queues/go-queue")).json()).parallelism).toBe(1);
  });

  it("Dlq().List and Events().List send api= when filtering by API (options.go:493-495, 546-548)", async () => {
    for (const path of ["/v2/dlq?api=llm", "/v2/events?api=llm&count=10", "/v2/logs?api=llm"]) {
      const answer = await dispatch.api(path);
      expect(answer.status, path).toBe(200);
    }
  });

  it("UrlGroups().RemoveEndpoints sends \"url\": \"\" beside the name (url_group.go:18)", async () => {
    await dispatch.api("/v2/topics/go-group/endpoints", json({ endpoints: [{ url: `${receiver.url}/a`, name: "a" }, { url: `${receiver.url}/b`, name: "b" }] }));
    const removed = await dispatch.api("/v2/topics/go-group/endpoints", json({ endpoints: [{ url: "", name: "a" }] }, "DELETE"));
    expect(removed.status).toBe(200);
    expect((await (await dispatch.api("/v2/topics/go-group")).json()).endpoints.map((e: { name: string }) => e.name)).toEqual(["b"]);
  });

  it("Keys().Rotate posts to /v2/rotate (signing_key.go:32-43)", async () => {
    const before = await (await dispatch.api("/v2/keys")).json();
    const rotated = await dispatch.api("/v2/rotate", { method: "POST" });
    expect(rotated.status).toBe(200);
    expect((await rotated.json()).current).toBe(before.next);
  });
});

describe("answers as the hosted service's description gives them", () => {
  it("flow control: period whenever there is a key (1 s by default), rate only when set", async () => {
    const answer = await dispatch.api(`/v2/publish/${receiver.url}/period`, {
      method: "POST", body: "x", headers: { "Upstash-Flow-Control-Key": "flow-key", "Upstash-Flow-Control-Value": "parallelism=2", "Upstash-Delay": "1d" },
    });
    const { messageId } = await answer.json();
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message).toMatchObject({ flowControlKey: "flow-key", parallelism: 2, period: 1 });
    expect(message).not.toHaveProperty("rate");
    await dispatch.api(`/v2/messages/${messageId}`, { method: "DELETE" });
  });

  it("a schedule without a body has no body key; its caller's address is callerIP only", async () => {
    const { scheduleId } = await (await dispatch.api(`/v2/schedules/${receiver.url}/no-body`, { method: "POST", headers: { "Upstash-Cron": "0 0 1 1 *" } })).json();
    const listed = (await (await dispatch.api("/v2/schedules")).json()).find((s: { scheduleId: string }) => s.scheduleId === scheduleId);
    expect(listed).not.toHaveProperty("body");
    expect(listed).not.toHaveProperty("bodyBase64");
    expect(listed.callerIP).toBe("127.0.0.1");
    expect(listed).not.toHaveProperty("callerIp");
  });

  it("a message shows its caller's address as callerIP only; callerIp and callerIP both filter", async () => {
    const { messageId } = await (await dispatch.api(`/v2/publish/${receiver.url}/caller`, { method: "POST", body: "x", headers: { "Upstash-Delay": "1d" } })).json();
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message.callerIP).toBe("127.0.0.1");
    expect(message).not.toHaveProperty("callerIp");
    for (const name of ["callerIp", "callerIP"]) {
      const events = (await (await dispatch.api(`/v2/events?${name}=127.0.0.1&messageId=${messageId}`)).json()).events;
      expect(events.length, name).toBeGreaterThan(0);
    }
    await dispatch.api(`/v2/messages/${messageId}`, { method: "DELETE" });
  });

  it("deleting a URL group, queue or schedule that does not exist changes nothing and answers 200", async () => {
    for (const path of ["/v2/topics/never-made", "/v2/queues/never-made", "/v2/schedules/scd_never_made"]) {
      expect((await dispatch.api(path, { method: "DELETE" })).status, path).toBe(200);
    }
  });
});
