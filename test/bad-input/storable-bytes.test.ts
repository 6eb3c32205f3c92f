/**
 * Message bodies, event data and header values that can be stored are taken
 * as given: a published or batched body, a workflow payload (triggered or in
 * an invoke envelope) and notify data holding NUL and any other byte, a
 * destination's own query with NUL and non-UTF-8 escapes, and a latin1 header
 * value. What bad input is refused is in refusals.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { receiverPool } from "../support/receiver";
import { storedRun } from "../support/rows";
import { startTestService, TEST_TOKEN, type TestService, useDispatch } from "../support/service";
import { INVOKE_HEADERS, rawRequestTo } from "./fixtures";

const dispatch = useDispatch({}, { role: "api" });
const rawRequest = rawRequestTo(dispatch);

describe("bytes and header values that are storable are taken as given", () => {
  const receivers = receiverPool();
  let worker: TestService;

  beforeAll(async () => {
    worker = await startTestService({}, { role: "worker", databaseUrl: dispatch.service.databaseUrl });
  });
  afterEach(() => receivers.closeAll());
  afterAll(async () => {
    await worker?.stop();
  });

  it("delivers a published body holding NUL and every other byte, byte for byte", async () => {
    const receiver = await receivers.start();
    const body = Buffer.from(Array.from({ length: 512 }, (_, index) => index % 256));
    const response = await dispatch.api(`/v2/publish/${receiver.url}/binary`, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body,
    });
    expect(response.status).toBe(200);
    const [got] = await receiver.waitFor(1);
    expect(got!.body.equals(body)).toBe(true);
  });

  it("delivers a batch item body holding NUL, byte for byte", async () => {
    const receiver = await receivers.start();
    const response = await dispatch.api("/v2/batch", {
      method: "POST",
      body: JSON.stringify([{ destination: `${receiver.url}/batch`, body: "a\u0000b" }]),
    });
    expect(response.status).toBe(200);
    const [got] = await receiver.waitFor(1);
    expect([...got!.body]).toEqual([0x61, 0x00, 0x62]);
  });

  it("keeps a destination's own query, NUL and non-UTF-8 escapes included, as sent", async () => {
    const receiver = await receivers.start();
    const response = await dispatch.api(`/v2/publish/${receiver.url}/query?a=%00&b=%FF&c=%C3%28`, { method: "POST" });
    expect(response.status).toBe(200);
    const [got] = await receiver.waitFor(1);
    expect(got!.path).toBe("/query?a=%00&b=%FF&c=%C3%28");
  });

  it("takes event data holding NUL and any byte in a notify", async () => {
    const response = await dispatch.api("/v2/notify/bytes-event", {
      method: "POST",
      body: Buffer.from([0, 0xff, 0xfe, 1]),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it("starts a workflow run whose payload holds NUL and any byte", async () => {
    const receiver = await receivers.start();
    const response = await dispatch.api(`/v2/trigger/${receiver.url}/workflow`, {
      method: "POST",
      body: Buffer.from([0x7b, 0, 0xff, 0x7d]),
    });
    expect(response.status).toBe(200);
    const { workflowRunId } = await response.json();
    const run = await storedRun(dispatch, workflowRunId);
    expect(run).toBeDefined();
  });

  it("starts an invoked run whose payload in the invoke envelope holds NUL", async () => {
    const receiver = await receivers.start();
    const response = await dispatch.api(`/v2/publish/${receiver.url}/invoked`, {
      method: "POST",
      headers: { ...INVOKE_HEADERS, "Upstash-Workflow-RunId": "wfr_invoked_nul" },
      body: JSON.stringify({ workflowRunId: "wfr_parent", body: "a\u0000b" }),
    });
    expect(response.status).toBe(200);
    const [got] = await receiver.waitFor(1);
    // The run's first call carries its step list; the payload is the first step's body, base64.
    const [first] = JSON.parse(got!.body.toString()) as { body: string }[];
    expect([...Buffer.from(first!.body, "base64")]).toEqual([0x61, 0x00, 0x62]);
  });

  it("stores and forwards a latin1 header value (bytes 0x80-0xFF) as the characters node reads", async () => {
    const receiver = await receivers.start();
    const { status, body } = await rawRequest(
      Buffer.concat([
        Buffer.from(`POST /v2/publish/${receiver.url}/latin1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n`),
        Buffer.from("Upstash-Forward-X-Latin: caf\xe9 \xff\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", "latin1"),
      ]),
    );
    expect(status).toBe(200);
    const [got] = await receiver.waitFor(1);
    expect(got!.headers["x-latin"]).toBe("caf\u00e9 \u00ff");
    const message = await (await dispatch.api(`/v2/messages/${JSON.parse(body).messageId}`)).json();
    expect(message.header["X-Latin"]).toEqual(["caf\u00e9 \u00ff"]);
  });
});
