/**
 * Every operation of the API document answers, for real, what the document
 * says, strictly: the service under test checks each JSON answer against its
 * operation's schema with no field left undescribed (DISPATCH_CHECK_ANSWERS,
 * src/http/openapi/answer-check.ts), and a mismatch fails the test as an
 * internal error would. The whole suite runs with the check on; this file
 * makes sure each operation's successful answer is met at least once, with
 * the optional fields its objects may carry set: a new operation without a
 * request here fails the last test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { type Receiver, startReceiver } from "./support/receiver";
import { TEST_TOKEN, useDispatch } from "./support/service";
import { startActiveRun, startUnfinishedRunReceiver, startWorkflowApp, type WorkflowApp } from "./support/workflow-app";

const ADMIN_TOKEN = "admin-token-0123456789abcdef";
const dispatch = useDispatch({ delayScale: 0.001, adminToken: ADMIN_TOKEN });
let receiver: Receiver;
let failing: Receiver;
let unfinished: Receiver;
let app: WorkflowApp;
/** Where the failing run's failure callbacks go: down until a test says otherwise. */
let failureUrl: Receiver;
/** The operations a request here met, as `METHOD /path/{template}`. */
const met = new Set<string>();

beforeAll(async () => {
  receiver = await startReceiver();
  failing = await startReceiver(() => ({ status: 500, headers: { "X-Why": "down" }, body: '{"error":"down on purpose"}' }));
  unfinished = await startUnfinishedRunReceiver();
  app = await startWorkflowApp(dispatch, {
    "/fails": {
      route: async (context) => {
        await context.run("step", () => {
          throw new Error("fails on purpose");
        });
      },
    },
  });
  failureUrl = await startReceiver(() => ({ status: 500, body: "failure handler down" }));
});
afterAll(async () => {
  await Promise.all([receiver.close(), failing.close(), unfinished.close(), app.close(), failureUrl.close()]);
});

/**
 * Calls `path` (matching `operation`, e.g. `GET /v2/queues/{name}`) with the
 * test token; expects a 2xx (or the 302 an operation is described to answer)
 * and returns the JSON.
 */
async function call(operation: string, path: string, init: RequestInit = {}, status = 200): Promise<any> {
  const [method] = operation.split(" ");
  const response = await dispatch.api(path, { method, redirect: "manual", ...init });
  const text = await response.text();
  expect(Math.floor(response.status / 100), `${operation}: ${response.status} ${text}`).toBe(Math.floor(status / 100));
  met.add(operation);
  return text === "" || !(response.headers.get("content-type") ?? "").includes("json") ? text : JSON.parse(text);
}

const json = (body: unknown): RequestInit => ({ body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
/** Every option a message can carry, so that its optional fields show. */
const FULL = {
  "Upstash-Retries": "0",
  "Upstash-Retry-Delay": "1000",
  "Upstash-Timeout": "30s",
  "Upstash-Callback": "http://127.0.0.1:9/callback",
  "Upstash-Failure-Callback": "http://127.0.0.1:9/failure",
  "Upstash-Flow-Control-Key": "answers",
  "Upstash-Flow-Control-Value": "parallelism=5, rate=10, period=1m",
  "Upstash-Label": "answers",
  "Upstash-Forward-X-Kind": "tour",
};

describe("messages, logs, the DLQ", () => {
  let failed: { dlqId: string; messageId: string };

  it("publish, enqueue, batch; read a message; the logs; cancel", async () => {
    const published = await call("POST /v2/publish/{destination}", `/v2/publish/${receiver.url}/full`, {
      method: "POST", body: "{}", headers: { ...FULL, "Upstash-Delay": "1d", "Content-Type": "application/json" },
    });
    await call("POST /v2/enqueue/{queue}/{destination}", `/v2/enqueue/tour/${receiver.url}/queued`, { method: "POST", body: "q" });
    await call("POST /v2/batch", "/v2/batch", { method: "POST", ...json([{ destination: `${receiver.url}/batch`, body: "b" }]) });
    const message = await call("GET /v2/messages/{id}", `/v2/messages/${published.messageId}`);
    expect(message).toMatchObject({ callback: expect.any(String), failureCallback: expect.any(String), label: "answers", period: 60 });
    await call("GET /v2/events", `/v2/events?messageId=${published.messageId}`);
    await call("GET /v2/logs", "/v2/logs?count=1000");
    await call("DELETE /v2/messages/{id}", `/v2/messages/${published.messageId}`, { method: "DELETE" });
    await call("DELETE /v2/messages", "/v2/messages?label=nothing-has-this", { method: "DELETE" });
  });

  it("retry now, a Dispatch extension, for a message waiting out its backoff", async () => {
    const { messageId } = await call("POST /v2/publish/{destination}", `/v2/publish/${failing.url}/backoff`, {
      method: "POST", body: "x", headers: { "Upstash-Retries": "2", "Upstash-Retry-Delay": "86400000" },
    });
    await poll(async () => (await call("GET /v2/messages/{id}", `/v2/messages/${messageId}`)).state === "RETRY", "the message to wait out its backoff");
    await call("POST /v2/messages/{id}/retry-now", `/v2/messages/${messageId}/retry-now`, { method: "POST" });
    await call("DELETE /v2/messages/{id}", `/v2/messages/${messageId}`, { method: "DELETE" });
  });

  it("a failed message in the DLQ: list, read, retry, delete", async () => {
    const { messageId } = await call("POST /v2/publish/{destination}", `/v2/publish/${failing.url}/dead`, {
      method: "POST", body: "x", headers: { ...FULL, "Upstash-Callback": `${receiver.url}/cb`, "Upstash-Failure-Callback": `${receiver.url}/fcb` },
    });
    const entry = await poll(async () => (await call("GET /v2/dlq", "/v2/dlq")).messages.find((m: { messageId: string }) => m.messageId === messageId), "the DLQ entry");
    failed = { dlqId: entry.dlqId, messageId };
    await call("GET /v2/dlq/{dlqId}", `/v2/dlq/${failed.dlqId}`);
    const retried = await call("POST /v2/dlq/retry/{dlqId}", `/v2/dlq/retry/${failed.dlqId}`, { method: "POST" });
    expect(retried.messageId).toMatch(/^msg_/);
    await poll(async () => (await call("GET /v2/dlq", "/v2/dlq")).messages.length >= 1, "the retry in the DLQ");
    await call("POST /v2/dlq/retry", "/v2/dlq/retry?label=nothing-has-this", { method: "POST" });
    const { messages } = await call("GET /v2/dlq", "/v2/dlq");
    await call("DELETE /v2/dlq/{dlqId}", `/v2/dlq/${messages[0].dlqId}`, { method: "DELETE" });
    await call("DELETE /v2/dlq", "/v2/dlq?label=nothing-has-this", { method: "DELETE" });
  });
});

describe("queues, URL groups, schedules, flow control, keys", () => {
  it("queues", async () => {
    await call("POST /v2/queues", "/v2/queues", { method: "POST", ...json({ queueName: "tour-q", parallelism: 2 }) });
    await call("GET /v2/queues", "/v2/queues");
    await call("POST /v2/queues/{name}/pause", "/v2/queues/tour-q/pause", { method: "POST" });
    await call("POST /v2/queues/{name}/resume", "/v2/queues/tour-q/resume", { method: "POST" });
    await call("GET /v2/queues/{name}", "/v2/queues/tour-q");
    await call("DELETE /v2/queues/{name}", "/v2/queues/tour-q", { method: "DELETE" });
  });

  it("URL groups", async () => {
    const endpoints = { endpoints: [{ url: `${receiver.url}/a`, name: "a" }, { url: `${receiver.url}/b` }] };
    await call("POST /v2/topics/{name}/endpoints", "/v2/topics/tour-g/endpoints", { method: "POST", ...json(endpoints) });
    await call("GET /v2/topics", "/v2/topics");
    await call("GET /v2/topics/{name}", "/v2/topics/tour-g");
    await call("DELETE /v2/topics/{name}/endpoints", "/v2/topics/tour-g/endpoints", { method: "DELETE", ...json({ endpoints: [{ name: "a" }] }) });
    await call("DELETE /v2/topics/{name}", "/v2/topics/tour-g", { method: "DELETE" });
  });

  it("schedules", async () => {
    const { scheduleId } = await call("POST /v2/schedules/{destination}", `/v2/schedules/${receiver.url}/tick`, {
      method: "POST", body: "tick", headers: { ...FULL, "Upstash-Cron": "0 0 1 1 *", "Upstash-Delay": "10s", "Upstash-Queue-Name": "tour-sq" },
    });
    await call("GET /v2/schedules", "/v2/schedules");
    await call("GET /v2/schedules/{id}", `/v2/schedules/${scheduleId}`);
    await call("PATCH /v2/schedules/{id}/pause", `/v2/schedules/${scheduleId}/pause`, { method: "PATCH" });
    await call("PATCH /v2/schedules/{id}/resume", `/v2/schedules/${scheduleId}/resume`, { method: "PATCH" });
    await call("POST /v2/schedules/{id}/pause", `/v2/schedules/${scheduleId}/pause`, { method: "POST" });
    await call("POST /v2/schedules/{id}/resume", `/v2/schedules/${scheduleId}/resume`, { method: "POST" });
    await call("DELETE /v2/schedules/{id}", `/v2/schedules/${scheduleId}`, { method: "DELETE" });
  });

  it("flow control", async () => {
    await call("GET /v2/flowControl", "/v2/flowControl");
    await call("GET /v2/flowControl/{key}", "/v2/flowControl/answers");
    await call("POST /v2/flowControl/{key}/pause", "/v2/flowControl/answers/pause", { method: "POST" });
    await call("POST /v2/flowControl/{key}/resume", "/v2/flowControl/answers/resume", { method: "POST" });
    await call("POST /v2/flowControl/{key}/pin", "/v2/flowControl/answers/pin?parallelism=3&rate=5&period=10", { method: "POST" });
    await call("POST /v2/flowControl/{key}/unpin", "/v2/flowControl/answers/unpin?parallelism=true&rate=true", { method: "POST" });
    await call("POST /v2/flowControl/{key}/resetRate", "/v2/flowControl/answers/resetRate", { method: "POST" });
    await call("POST /v2/flowControl/{key}/reset", "/v2/flowControl/answers/reset", { method: "POST" });
    await call("GET /v2/globalParallelism", "/v2/globalParallelism");
  });

  it("destinations, a Dispatch extension: list, read, open and close a circuit by hand", async () => {
    const origin = encodeURIComponent("https://answers.example");
    await call("POST /v2/destinations/{destination}/open", `/v2/destinations/${origin}/open`, { method: "POST" });
    await call("GET /v2/destinations", "/v2/destinations?circuit=OPEN");
    await call("GET /v2/destinations/{destination}", `/v2/destinations/${origin}`);
    await call("POST /v2/destinations/{destination}/close", `/v2/destinations/${origin}/close`, { method: "POST" });
  });

  it("operations: health, metrics, the document", async () => {
    await call("GET /health", "/health");
    await call("GET /health/live", "/health/live");
    await call("GET /health/ready", "/health/ready");
    await call("GET /metrics", "/metrics");
    await call("GET /openapi.json", "/openapi.json");
    await call("GET /docs", "/docs");
  });
});

describe("workflows", () => {
  it("a run that fails: its run, logs, DLQ entry, its failure callback retried and cancelled, resume and restart", async () => {
    const { workflowRunId } = await call("POST /v2/trigger/{destination}", `/v2/trigger/${app.url("/fails")}`, {
      method: "POST", body: "{}", headers: { "Upstash-Retries": "0", "Upstash-Failure-Callback": `${failureUrl.url}/failed` },
    });
    const inDlq = async () => (await call("GET /v2/workflows/dlq", "/v2/workflows/dlq?failureFunctionState=CALLBACK_FAIL")).messages
      .find((m: { workflowRunId: string }) => m.workflowRunId === workflowRunId);
    const entry = await poll(inDlq, "the run's DLQ entry, its failure callback failed");
    await call("GET /v2/workflows/dlq/{dlqId}", `/v2/workflows/dlq/${entry.dlqId}`);
    await call("GET /v2/workflows/logs", `/v2/workflows/logs?workflowRunId=${workflowRunId}`);
    await call("GET /v2/workflows/events", `/v2/workflows/events?groupBy=workflowRunId&workflowRunId=${workflowRunId}`);
    await call("GET /v2/workflows/events", `/v2/workflows/events?workflowRunId=${workflowRunId}&trimBody=10`);
    // A retried failure callback held in flight, then cancelled (302, as described).
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    failureUrl.respond(async () => (await gate, { status: 200 }));
    const arrived = failureUrl.requests.length;
    await call("POST /v2/workflows/dlq/callback/{dlqId}", `/v2/workflows/dlq/callback/${entry.dlqId}`, { method: "POST" });
    await failureUrl.waitFor(arrived + 1);
    await call("DELETE /v2/workflows/dlq/callback/{dlqId}", `/v2/workflows/dlq/callback/${entry.dlqId}`, { method: "DELETE" }, 302);
    release();
    await call("POST /v2/workflows/dlq/resume/{dlqId}", `/v2/workflows/dlq/resume/${entry.dlqId}`, { method: "POST" });
    const again = await poll(async () => (await call("GET /v2/workflows/dlq", "/v2/workflows/dlq")).messages[0], "a DLQ entry");
    await call("POST /v2/workflows/dlq/restart/{dlqId}", `/v2/workflows/dlq/restart/${again.dlqId}`, { method: "POST" });
    await poll(async () => (await call("GET /v2/workflows/dlq", "/v2/workflows/dlq")).messages.length > 0, "a DLQ entry");
    await call("POST /v2/workflows/dlq/resume", "/v2/workflows/dlq/resume?label=nothing-has-this", { method: "POST" });
    await call("POST /v2/workflows/dlq/restart", "/v2/workflows/dlq/restart?label=nothing-has-this", { method: "POST" });
    const { messages } = await call("GET /v2/workflows/dlq", "/v2/workflows/dlq");
    await call("DELETE /v2/workflows/dlq/{dlqId}", `/v2/workflows/dlq/${messages[0].dlqId}`, { method: "DELETE" });
    await call("DELETE /v2/workflows/dlq", "/v2/workflows/dlq?label=nothing-has-this", { method: "DELETE" });
  });

  it("a run that waits: wait, waiters, notify, the webhook, cancel", async () => {
    const runId = await startActiveRun(dispatch, unfinished);
    await call("GET /v2/workflows/runs/{id}", `/v2/workflows/runs/${runId}`);
    await call("POST /v2/wait/{eventId}", "/v2/wait/tour-event", {
      method: "POST",
      headers: { "Upstash-Workflow-RunId": runId, "Upstash-Workflow-Url": `${unfinished.url}/workflow`, "Upstash-Workflow-Init": "false" },
      body: JSON.stringify({
        url: `${unfinished.url}/workflow`,
        timeout: "1d",
        timeoutUrl: `${unfinished.url}/workflow`,
        timeoutBody: "timed out",
        timeoutHeaders: { "Upstash-Workflow-Runid": [runId] },
        step: { stepId: 1, stepType: "Wait", stepName: "wait", concurrent: 1 },
      }),
    });
    await call("GET /v2/waiters/{eventId}", "/v2/waiters/tour-event");
    await call("POST /v2/notify/{eventId}", "/v2/notify/tour-event", { method: "POST", body: "data" });
    await call("POST /v2/notify/{runId}/{eventId}", `/v2/notify/${runId}/other-event`, { method: "POST", body: "data" });
    const user = JSON.parse(Buffer.from(TEST_TOKEN, "base64").toString()).UserID;
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      await call(`${method} /v2/workflows/hooks/{userId}/{runId}/{eventId}`, `/v2/workflows/hooks/${user}/${runId}/hook-${method}`, { method });
    }
    await call("DELETE /v2/workflows/runs/{id}", `/v2/workflows/runs/${runId}?cancel=true`, { method: "DELETE" });
    const triggered = await call("POST /v2/batch/trigger", "/v2/batch/trigger", {
      method: "POST", ...json([{ destination: `${unfinished.url}/workflow`, body: "{}" }, { destination: `${unfinished.url}/workflow` }]),
    });
    expect(triggered).toHaveLength(2);
    await call("DELETE /v2/workflows/runs", "/v2/workflows/runs?label=nothing-has-this", { method: "DELETE" });
  });
});

describe("projects", () => {
  it("the administration: create, environment, list, limit, delete", async () => {
    const admin = { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } };
    const adminCall = async (operation: string, path: string, method: string) => {
      const response = await fetch(`${dispatch.baseUrl}${path}`, { method, ...admin });
      const text = await response.text();
      expect(response.status, `${operation}: ${text}`).toBe(200);
      met.add(operation);
    };
    await adminCall("POST /admin/projects/{name}", "/admin/projects/tour", "POST");
    await adminCall("GET /admin/projects/{name}/env", "/admin/projects/tour/env", "GET");
    await adminCall("GET /admin/projects", "/admin/projects", "GET");
    await adminCall("POST /admin/projects/{name}/limit", "/admin/projects/tour/limit?messagesPerDay=10&publishesPerSecond=5", "POST");
    await adminCall("DELETE /admin/projects/{name}", "/admin/projects/tour?force=true", "DELETE");
  });
});

describe("last", () => {
  // After the workflows: the workflow app verifies signatures with the keys Dispatch had when it started.
  it("signing keys", async () => {
    await call("GET /v2/keys", "/v2/keys");
    await call("POST /v2/keys/rotate", "/v2/keys/rotate", { method: "POST" });
    await call("POST /v2/rotate", "/v2/rotate", { method: "POST" });
  });

  it("the API document has no operation this file did not meet", async () => {
    const document = (await (await fetch(`${dispatch.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.filter((operation) => !met.has(operation)).sort()).toEqual([]);
  });
});
