/**
 * Forwarded headers that HTTP reserves for one connection or for the framing
 * (RFC 9110 §7.6.1) are dropped, as a proxy drops them: the message is
 * delivered on its first attempt with its own framing, and the other
 * forwarded headers arrive unchanged.
 */
import { request as httpRequest } from "node:http";
import { beforeEach, describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { type Received, startReceiver, useReceiver } from "./support/receiver";
import { messageEvents, messagesWhere } from "./support/rows";
import { TEST_TOKEN, useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver();

beforeEach(() => {
  receiver.requests.length = 0;
});

/** A body whose byte length (13) differs from its character count and from every forwarded length. */
const BODY = Buffer.from("héllo, wörld", "utf8");

/** Polls the message until it is no longer waiting for a delivery; returns its state and stored headers. */
async function finished(messageId: string): Promise<{ state: string; header: Record<string, string[]> }> {
  return poll(async () => {
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    return message.state !== "CREATED" && message.state !== "RETRY" && message;
  }, `message ${messageId} to finish`, 15_000);
}

/** What happened to the message: its state, how often it was tried, and the requests its path got. */
async function outcome(messageId: string, path: string) {
  const { state, header } = await finished(messageId);
  const errors = (await messageEvents(dispatch, messageId)).filter((e) => ["ERROR", "RETRY", "FAILED"].includes(e.state));
  const requests = receiver.requests.filter((r) => r.path === path);
  return { state, header, errors: errors.map((e) => e.error), requests };
}

/** One reserved header as a publisher forwards it, and what the receiver must see under that name instead. */
interface Case {
  name: string;
  forwarded: Record<string, string>;
  /** Names (lower-case) that must not arrive with the forwarded value. */
  absent: string[];
  /** What the receiver sees under a name the HTTP client sets itself. */
  onWire?: (got: Received) => Record<string, string | undefined>;
}

const CASES: Case[] = [
  { name: "Connection", forwarded: { Connection: "close" }, absent: [], onWire: () => ({ connection: "keep-alive" }) },
  {
    name: "Connection naming another forwarded header",
    forwarded: { Connection: "X-Secret", "X-Secret": "hop only" },
    absent: ["x-secret"],
    onWire: () => ({ connection: "keep-alive" }),
  },
  { name: "Keep-Alive", forwarded: { "Keep-Alive": "timeout=5" }, absent: ["keep-alive"] },
  { name: "Proxy-Connection", forwarded: { "Proxy-Connection": "keep-alive" }, absent: ["proxy-connection"] },
  { name: "TE", forwarded: { TE: "trailers" }, absent: ["te"] },
  { name: "Transfer-Encoding", forwarded: { "Transfer-Encoding": "chunked" }, absent: ["transfer-encoding"] },
  { name: "Upgrade", forwarded: { Upgrade: "websocket" }, absent: ["upgrade"] },
  { name: "Expect", forwarded: { Expect: "100-continue" }, absent: ["expect"] },
  { name: "Trailer", forwarded: { Trailer: "X-Checksum" }, absent: ["trailer"] },
  {
    name: "Content-Length with a wrong value",
    forwarded: { "Content-Length": "12" },
    absent: [],
    onWire: () => ({ "content-length": String(BODY.length) }),
  },
  {
    name: "Host",
    forwarded: { Host: "elsewhere.example" },
    absent: [],
    onWire: () => ({ host: `127.0.0.1:${receiver.port}` }),
  },
];

describe.each([
  ["native", "Svc-"],
  ["compat", "Upstash-"],
])("%s dialect", (dialect, p) => {
  it.each(CASES)("drops a forwarded $name and delivers on the first attempt", async ({ name, forwarded, absent, onWire }) => {
    const path = `/${dialect}/${name.replace(/\W+/g, "-")}`;
    const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8", [`${p}Forward-X-Kept`]: "yes" };
    // Upper- and lower-case forwards: the names are matched case-insensitively.
    for (const [header, value] of Object.entries(forwarded)) headers[`${p}Forward-${dialect === "native" ? header : header.toLowerCase()}`] = value;
    const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body: BODY });
    expect(response.status, await response.clone().text()).toBe(200);
    const { messageId } = await response.json();

    const { state, header, errors, requests } = await outcome(messageId, path);
    expect({ state, errors }).toEqual({ state: "DELIVERED", errors: [] });
    expect(requests).toHaveLength(1);
    const got = requests[0]!;
    expect(got.body.equals(BODY)).toBe(true);
    expect(got.headers["x-kept"]).toBe("yes");
    expect(got.headers["content-type"]).toBe("text/plain; charset=utf-8");
    for (const reserved of absent) expect(got.headers[reserved], reserved).toBeUndefined();
    for (const [wire, value] of Object.entries(onWire?.(got) ?? {})) expect(got.headers[wire], wire).toBe(value);
    // Dropped at publish too: the stored message shows only what is sent.
    const stored = Object.keys(header).map((h) => h.toLowerCase());
    expect(stored).toContain("x-kept");
    for (const reserved of Object.keys(forwarded)) expect(stored).not.toContain(reserved.toLowerCase());
  });
});

it("delivers a message stored with reserved headers before they were dropped at publish", async () => {
  const queue = "held-for-edit";
  await dispatch.api("/v2/queues", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ queueName: queue, parallelism: 1, paused: true }),
  });
  const response = await dispatch.api(`/v2/enqueue/${queue}/${receiver.url}/stored`, {
    method: "POST",
    headers: { "Svc-Forward-X-Kept": "yes" },
    body: BODY,
  });
  const { messageId } = await response.json();
  const legacy = { "Content-Length": "3", "Transfer-Encoding": "chunked", Connection: "X-Old", "X-Old": "1", Upgrade: "h2c" };
  await dispatch.service.sql`
    update dispatch.messages set headers = headers || ${dispatch.service.sql.json(legacy)} where id = ${messageId}`;
  await dispatch.api(`/v2/queues/${queue}/resume`, { method: "POST" });

  const { state, errors, requests } = await outcome(messageId, "/stored");
  expect({ state, errors }).toEqual({ state: "DELIVERED", errors: [] });
  expect(requests).toHaveLength(1);
  expect(requests[0]!.body.equals(BODY)).toBe(true);
  expect(requests[0]!.headers).toMatchObject({ "x-kept": "yes", "content-length": String(BODY.length) });
  for (const name of ["transfer-encoding", "x-old", "upgrade"]) expect(requests[0]!.headers[name], name).toBeUndefined();
});

it("header-forward mode drops the publish request's own connection headers and those its Connection names", async () => {
  const { status, body } = await rawPublish(`/v2/publish/${receiver.url}/all`, {
    Authorization: `Bearer ${TEST_TOKEN}`,
    "Svc-Header-Forward": "true",
    Connection: "keep-alive, X-Hop",
    "X-Hop": "publisher's hop",
    "X-Plain": "forwarded",
    "Content-Type": "text/plain",
  });
  expect(status, body).toBe(200);
  const { state, errors, requests } = await outcome(JSON.parse(body).messageId, "/all");
  expect({ state, errors }).toEqual({ state: "DELIVERED", errors: [] });
  const got = requests[0]!;
  expect(got.headers["x-plain"]).toBe("forwarded");
  expect(got.headers["x-hop"]).toBeUndefined();
  expect(got.headers.authorization).toBeUndefined();
  expect(got.headers.host).toBe(`127.0.0.1:${receiver.port}`);
  expect(got.body.equals(BODY)).toBe(true);
});

it("every endpoint of a URL group gets a fan-out whose forwarded Content-Length was dropped", async () => {
  const endpoints = [{ url: `${receiver.url}/group-a` }, { url: `${receiver.url}/group-b` }];
  const added = await dispatch.api("/v2/topics/framed/endpoints", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ endpoints }),
  });
  expect(added.status).toBe(200);
  const response = await dispatch.api("/v2/publish/framed", {
    method: "POST",
    headers: { "Upstash-Forward-Content-Length": "2", "Upstash-Forward-X-Kept": "yes" },
    body: BODY,
  });
  const results: { messageId: string; url: string }[] = await response.json();
  expect(results).toHaveLength(2);
  for (const { messageId, url } of results) {
    const { state, errors, requests } = await outcome(messageId, new URL(url).pathname);
    expect({ state, errors }).toEqual({ state: "DELIVERED", errors: [] });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body.equals(BODY)).toBe(true);
    expect(requests[0]!.headers["x-kept"]).toBe("yes");
  }
});

it("a callback with a forwarded Content-Length delivers", async () => {
  const callbacks = await startReceiver();
  try {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/with-callback`, {
      method: "POST",
      headers: {
        "Upstash-Callback": `${callbacks.url}/cb`,
        "Upstash-Callback-Forward-Content-Length": "5",
        "Upstash-Callback-Forward-Transfer-Encoding": "chunked",
        "Upstash-Callback-Forward-X-Callback-Token": "s3cret",
        "Upstash-Forward-Content-Length": "1",
      },
      body: BODY,
    });
    const { messageId } = await response.json();
    const [callback] = await callbacks.waitFor(1);
    const body = callback!.body.toString();
    expect(callback!.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(callback!.headers["transfer-encoding"]).toBeUndefined();
    expect(callback!.headers["x-callback-token"]).toBe("s3cret");
    expect(JSON.parse(body)).toMatchObject({ status: 200, sourceMessageId: messageId, retried: 0 });
    const [callbackMessage] = await messagesWhere(dispatch, { sourceMessageId: messageId, origin: "callback" });
    expect((await finished(callbackMessage!.id)).state).toBe("DELIVERED");
    expect(callbacks.requests).toHaveLength(1);
  } finally {
    await callbacks.close();
  }
});

describe("a header sent more than once", () => {
  it("is forwarded once, its values joined with \", \" in the order sent, as the Fetch API joins them", async () => {
    const answer = await rawPublish(`/v2/publish/${receiver.url}/twice`, [
      // Given as a list, node:http adds no Host header of its own.
      "Host", new URL(dispatch.baseUrl).host,
      "Authorization", `Bearer ${TEST_TOKEN}`,
      "Svc-Forward-X-Twice", "first",
      "Svc-Forward-X-Twice", "second",
      "Svc-Forward-X-Once", "only",
    ]);
    expect(answer).toMatchObject({ status: 200 });
    const { state } = await finished(JSON.parse(answer.body).messageId);
    expect(state).toBe("DELIVERED");
    const [got] = receiver.requests.filter((r) => r.path === "/twice");
    expect(got!.headers["x-twice"]).toBe("first, second");
    expect(got!.headers["x-once"]).toBe("only");
  });
});

/**
 * Publishes `BODY` with node:http, which sends `headers` as given (fetch would consume `Connection`);
 * as a flat list of names and values, a name may repeat.
 */
function rawPublish(path: string, headers: Record<string, string> | string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${dispatch.baseUrl}${path}`, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(BODY);
  });
}
