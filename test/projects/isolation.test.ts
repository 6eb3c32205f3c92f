/**
 * No route answers another project's rows (issue 37): the default project
 * makes one of everything (a pending message, a DLQ entry, a queue, a URL
 * group, a schedule, a flow-control key, an active workflow run, a failed
 * run in the workflow DLQ, a waiter), then a full token of project acme
 * calls every operation of the API document against those names and ids:
 * reads answer 404 or lists without them, changes answer 404 (or change
 * acme's own namesake), what every project shares answers 403. Afterwards
 * everything of the default project is as it was. An operation the document
 * lists and this file does not fails the last test, as the strict answer
 * check does (openapi-answers.test.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { type Receiver, startReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startActiveRun, startUnfinishedRunReceiver, startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch({ delayScale: 0.001 });
const acme = useProject(dispatch, "acme");
let receiver: Receiver;
let unfinished: Receiver;
let app: WorkflowApp;

/** The default project's things, by name or id. */
const ours = { message: "", dlqId: "", runId: "", workflowDlqId: "", failedRunId: "", keys: { current: "", next: "" } };

const json = (body: unknown): RequestInit => ({ method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
async function ok(path: string, init: RequestInit = {}): Promise<any> {
  const response = await dispatch.api(path, init);
  const text = await response.text();
  expect(response.status, `${path}: ${text}`).toBe(200);
  return text === "" ? null : JSON.parse(text);
}

beforeAll(async () => {
  receiver = await startReceiver();
  unfinished = await startUnfinishedRunReceiver();
  app = await startWorkflowApp(dispatch, { "/fails": { route: async (context) => void (await context.run("step", () => { throw new Error("fails on purpose"); })) } });
  ours.message = (await ok(`/v2/publish/${receiver.url}/later`, { method: "POST", headers: { "Upstash-Delay": "100d" }, body: "later" })).messageId;
  const dead = (await ok("/v2/publish/http://127.0.0.1:9/dead", { method: "POST", headers: { "Upstash-Retries": "0" }, body: "dead" })).messageId;
  ours.dlqId = await poll(async () => (await ok("/v2/dlq")).messages.find((m: { messageId: string }) => m.messageId === dead)?.dlqId, "the dead message's DLQ entry");
  await ok("/v2/queues", json({ queueName: "orders", parallelism: 2 }));
  await ok("/v2/topics/team/endpoints", json({ endpoints: [{ name: "ours", url: `${receiver.url}/team` }] }));
  await ok(`/v2/schedules/${receiver.url}/nightly`, { method: "POST", headers: { "Upstash-Cron": "0 0 1 1 *", "Upstash-Schedule-Id": "nightly" } });
  await ok(`/v2/publish/${receiver.url}/keyed`, { method: "POST", headers: { "Upstash-Flow-Control-Key": "tenant", "Upstash-Flow-Control-Value": "parallelism=3" } });
  ours.runId = await startActiveRun(dispatch, unfinished);
  await ok("/v2/wait/ev", {
    method: "POST",
    headers: { "Upstash-Workflow-RunId": ours.runId, "Upstash-Workflow-Url": `${unfinished.url}/workflow`, "Upstash-Workflow-Init": "false" },
    body: JSON.stringify({ url: `${unfinished.url}/workflow`, timeout: "1d", step: { stepId: 1, stepType: "Wait", stepName: "wait", concurrent: 1 } }),
  });
  ours.failedRunId = (await ok(`/v2/trigger/${app.url("/fails")}`, { method: "POST", body: "{}", headers: { "Upstash-Retries": "0" } })).workflowRunId;
  ours.workflowDlqId = await poll(
    async () => (await ok("/v2/workflows/dlq")).messages.find((m: { workflowRunId: string }) => m.workflowRunId === ours.failedRunId)?.dlqId,
    "the failed run's workflow DLQ entry",
  );
  ours.keys = await ok("/v2/keys");
});
afterAll(async () => {
  await Promise.all([receiver.close(), unfinished.close(), app.close()]);
});

/** What acme's call must answer: a status, and text it must not contain (our names and ids). */
type Expect = { status: number; without?: string[] };
const met = new Set<string>();
const secrets = () => [ours.message, ours.dlqId, ours.runId, ours.workflowDlqId, ours.failedRunId, ours.keys.current, ours.keys.next, `${receiver.url}/team`, "nightly"];

async function theirs(operation: string, path: string, init: RequestInit, expected: Expect): Promise<void> {
  const response = await acme.api(path, { redirect: "manual", ...init });
  const text = await response.text();
  expect(response.status, `${operation} as acme: ${text}`).toBe(expected.status);
  for (const secret of expected.without ?? secrets()) expect(text, `${operation} as acme answered our ${secret}`).not.toContain(secret);
  met.add(operation);
}
const GET: RequestInit = { method: "GET" };
const DELETE: RequestInit = { method: "DELETE" };
const POST: RequestInit = { method: "POST" };

it("answers another project's reads of our things with 404, and lists without them", async () => {
  const lists: [string, string][] = [
    ["GET /v2/logs", "/v2/logs"],
    ["GET /v2/events", "/v2/events"],
    ["GET /v2/dlq", "/v2/dlq"],
    ["GET /v2/queues", "/v2/queues"],
    ["GET /v2/topics", "/v2/topics"],
    ["GET /v2/schedules", "/v2/schedules"],
    ["GET /v2/flowControl", "/v2/flowControl"],
    ["GET /v2/workflows/logs", "/v2/workflows/logs"],
    ["GET /v2/workflows/events", "/v2/workflows/events"],
    ["GET /v2/workflows/dlq", "/v2/workflows/dlq"],
    ["GET /v2/waiters/{eventId}", "/v2/waiters/ev"],
    ["GET /v2/globalParallelism", "/v2/globalParallelism"],
  ];
  for (const [operation, path] of lists) await theirs(operation, path, GET, { status: 200 });
  await theirs("GET /v2/keys", "/v2/keys", GET, { status: 200 });
  const byId: [string, string][] = [
    ["GET /v2/messages/{id}", `/v2/messages/${ours.message}`],
    ["GET /v2/dlq/{dlqId}", `/v2/dlq/${ours.dlqId}`],
    ["GET /v2/queues/{name}", "/v2/queues/orders"],
    ["GET /v2/topics/{name}", "/v2/topics/team"],
    ["GET /v2/schedules/{id}", "/v2/schedules/nightly"],
    ["GET /v2/flowControl/{key}", "/v2/flowControl/tenant"],
    ["GET /v2/workflows/runs/{id}", `/v2/workflows/runs/${ours.runId}`],
    ["GET /v2/workflows/dlq/{dlqId}", `/v2/workflows/dlq/${ours.workflowDlqId}`],
  ];
  // A 404 names what was asked for, nothing more.
  for (const [operation, path] of byId) await theirs(operation, path, GET, { status: 404, without: [] });
  for (const [operation, path] of [["GET /v2/destinations", "/v2/destinations"], ["GET /v2/destinations/{destination}", `/v2/destinations/${encodeURIComponent(receiver.url)}`], ["GET /metrics", "/metrics"]] as const) {
    await theirs(operation, path, GET, { status: 403 });
  }
});

it("answers another project's changes of our things with 404, or changes its own namesake", async () => {
  const notFound: [string, string, RequestInit][] = [
    ["DELETE /v2/messages/{id}", `/v2/messages/${ours.message}`, DELETE],
    ["POST /v2/messages/{id}/retry-now", `/v2/messages/${ours.message}/retry-now`, POST],
    ["DELETE /v2/dlq/{dlqId}", `/v2/dlq/${ours.dlqId}`, DELETE],
    ["POST /v2/dlq/retry/{dlqId}", `/v2/dlq/retry/${ours.dlqId}`, POST],
    ["POST /v2/queues/{name}/pause", "/v2/queues/orders/pause", POST],
    ["POST /v2/queues/{name}/resume", "/v2/queues/orders/resume", POST],
    ["DELETE /v2/topics/{name}/endpoints", "/v2/topics/team/endpoints", { method: "DELETE", body: JSON.stringify({ endpoints: [{ name: "ours" }] }), headers: { "Content-Type": "application/json" } }],
    ["POST /v2/schedules/{id}/pause", "/v2/schedules/nightly/pause", POST],
    ["POST /v2/schedules/{id}/resume", "/v2/schedules/nightly/resume", POST],
    ["PATCH /v2/schedules/{id}/pause", "/v2/schedules/nightly/pause", { method: "PATCH" }],
    ["PATCH /v2/schedules/{id}/resume", "/v2/schedules/nightly/resume", { method: "PATCH" }],
    ["POST /v2/flowControl/{key}/pause", "/v2/flowControl/tenant/pause", POST],
    ["POST /v2/flowControl/{key}/resume", "/v2/flowControl/tenant/resume", POST],
    ["POST /v2/flowControl/{key}/pin", "/v2/flowControl/tenant/pin?parallelism=1", POST],
    ["POST /v2/flowControl/{key}/unpin", "/v2/flowControl/tenant/unpin?parallelism=true", POST],
    ["POST /v2/flowControl/{key}/reset", "/v2/flowControl/tenant/reset", POST],
    ["POST /v2/flowControl/{key}/resetRate", "/v2/flowControl/tenant/resetRate", POST],
    ["DELETE /v2/workflows/runs/{id}", `/v2/workflows/runs/${ours.runId}?cancel=true`, DELETE],
    ["POST /v2/notify/{runId}/{eventId}", `/v2/notify/${ours.runId}/ev`, { method: "POST", body: "x" }],
    ["POST /v2/workflows/dlq/resume/{dlqId}", `/v2/workflows/dlq/resume/${ours.workflowDlqId}`, POST],
    ["POST /v2/workflows/dlq/restart/{dlqId}", `/v2/workflows/dlq/restart/${ours.workflowDlqId}`, POST],
    ["POST /v2/workflows/dlq/callback/{dlqId}", `/v2/workflows/dlq/callback/${ours.workflowDlqId}`, POST],
    ["DELETE /v2/workflows/dlq/callback/{dlqId}", `/v2/workflows/dlq/callback/${ours.workflowDlqId}`, DELETE],
    ["DELETE /v2/workflows/dlq/{dlqId}", `/v2/workflows/dlq/${ours.workflowDlqId}`, DELETE],
  ];
  for (const [operation, path, init] of notFound) await theirs(operation, path, init, { status: 404, without: [] });
  // A step for a run the caller's project does not have is refused as for an unknown run (the protocol's 400).
  await theirs("POST /v2/wait/{eventId}", "/v2/wait/ev", {
      method: "POST",
      headers: { "Upstash-Workflow-RunId": ours.runId, "Upstash-Workflow-Url": `${unfinished.url}/workflow`, "Upstash-Workflow-Init": "false" },
      body: JSON.stringify({ url: `${unfinished.url}/workflow`, timeout: "1d", step: { stepId: 2, stepType: "Wait", stepName: "wait", concurrent: 1 } }),
    }, { status: 400, without: [] });
  // Deleting what does not exist answers 200 and deletes nothing (docs/hosted-api.md): acme has no `orders`, `team` or `nightly`.
  for (const [operation, path] of [["DELETE /v2/queues/{name}", "/v2/queues/orders"], ["DELETE /v2/topics/{name}", "/v2/topics/team"], ["DELETE /v2/schedules/{id}", "/v2/schedules/nightly"]] as const) {
    await theirs(operation, path, DELETE, { status: 200 });
  }
  for (const [operation, path] of [["POST /v2/destinations/{destination}/open", "open"], ["POST /v2/destinations/{destination}/close", "close"]] as const) {
    await theirs(operation, `/v2/destinations/${encodeURIComponent(receiver.url)}/${path}`, POST, { status: 403 });
  }
  // Bulk changes with no filter reach everything: everything of acme's.
  const bulk: [string, string, RequestInit][] = [
    ["DELETE /v2/messages", "/v2/messages", DELETE],
    ["DELETE /v2/dlq", "/v2/dlq?dlqIds=" + ours.dlqId, DELETE],
    ["DELETE /v2/workflows/runs", "/v2/workflows/runs", DELETE],
    ["POST /v2/workflows/dlq/resume", "/v2/workflows/dlq/resume", POST],
    ["POST /v2/workflows/dlq/restart", "/v2/workflows/dlq/restart", POST],
    ["DELETE /v2/workflows/dlq", "/v2/workflows/dlq", DELETE],
    ["POST /v2/notify/{eventId}", "/v2/notify/ev", { method: "POST", body: "x" }],
  ];
  for (const [operation, path, init] of bulk) await theirs(operation, path, init, { status: 200 });
  await theirs("POST /v2/dlq/retry", `/v2/dlq/retry?dlqIds=${ours.dlqId}`, POST, { status: 201 });
  // Making things of the same names makes acme's own.
  const own: [string, string, RequestInit][] = [
    ["POST /v2/queues", "/v2/queues", json({ queueName: "orders", parallelism: 9 })],
    ["POST /v2/topics/{name}/endpoints", "/v2/topics/team/endpoints", json({ endpoints: [{ name: "theirs", url: `${receiver.url}/acme-team` }] })],
    ["POST /v2/schedules/{destination}", `/v2/schedules/${receiver.url}/acme`, { method: "POST", headers: { "Upstash-Cron": "0 0 1 1 *", "Upstash-Schedule-Id": "nightly" } }],
    ["POST /v2/enqueue/{queue}/{destination}", `/v2/enqueue/orders/${receiver.url}/acme`, { method: "POST", body: "a" }],
    ["POST /v2/publish/{destination}", `/v2/publish/${receiver.url}/acme`, { method: "POST", headers: { "Upstash-Flow-Control-Key": "tenant", "Upstash-Flow-Control-Value": "parallelism=1" }, body: "a" }],
    ["POST /v2/batch", "/v2/batch", json([{ destination: `${receiver.url}/acme`, body: "a" }])],
    ["POST /v2/trigger/{destination}", `/v2/trigger/${unfinished.url}/acme-workflow`, { method: "POST", body: "{}" }],
    ["POST /v2/keys/rotate", "/v2/keys/rotate", POST],
    ["POST /v2/rotate", "/v2/rotate", POST],
  ];
  // Our names are theirs too here; our ids and keys are not.
  const ids = [ours.message, ours.dlqId, ours.runId, ours.workflowDlqId, ours.failedRunId, ours.keys.current, ours.keys.next];
  for (const [operation, path, init] of own) await theirs(operation, path, init, { status: 200, without: ids });
  await theirs("POST /v2/batch/trigger", "/v2/batch/trigger", json([{ destination: `${unfinished.url}/acme-workflow`, body: "{}" }]), { status: 201, without: ids });
});

it("leaves every thing of the default project as it was", async () => {
  expect((await ok(`/v2/messages/${ours.message}`)).state).toBe("CREATED");
  expect((await ok(`/v2/dlq/${ours.dlqId}`)).dlqId).toBe(ours.dlqId);
  expect(await ok("/v2/queues/orders")).toMatchObject({ name: "orders", parallelism: 2, paused: false });
  expect((await ok("/v2/topics/team")).endpoints).toEqual([{ name: "ours", url: `${receiver.url}/team` }]);
  expect(await ok("/v2/schedules/nightly")).toMatchObject({ scheduleId: "nightly", isPaused: false, destination: `${receiver.url}/nightly` });
  expect(await ok("/v2/flowControl/tenant")).toMatchObject({ isPaused: false, parallelismMax: 3 });
  expect(await ok(`/v2/workflows/runs/${ours.runId}`)).not.toBeNull();
  expect((await ok(`/v2/workflows/logs?workflowRunId=${ours.runId}`)).runs[0]).toMatchObject({ workflowRunId: ours.runId, workflowState: "RUN_STARTED" });
  expect((await ok("/v2/waiters/ev")).length).toBe(1);
  expect((await ok(`/v2/workflows/dlq/${ours.workflowDlqId}`)).dlqId).toBe(ours.workflowDlqId);
  expect(await ok("/v2/keys")).toEqual(ours.keys);
});

it("keeps a failed message's DLQ entry in the message's project", async () => {
  const dead = await (await acme.api("/v2/publish/http://127.0.0.1:9/acme-dead", { method: "POST", headers: { "Upstash-Retries": "0" }, body: "d" })).json();
  const listed = async (api: typeof dispatch.api) => (await (await api("/v2/dlq")).json()).messages.map((m: { messageId: string }) => m.messageId);
  await poll(async () => (await listed(acme.api)).includes(dead.messageId), "acme's DLQ entry");
  expect(await listed(dispatch.api)).not.toContain(dead.messageId);
  expect(await dispatch.service.sql`select project from dispatch.dlq where message_id = ${dead.messageId}`).toEqual([{ project: "acme" }]);
});

it("has met every operation of the API document that reads or changes a project's data", async () => {
  // Neither a project's data nor its token: health, the document and its page, the hooks (their URL's user id names the project).
  const outside = ["GET /health", "GET /health/live", "GET /health/ready", "GET /openapi.json", "GET /docs"];
  const document = (await (await fetch(`${dispatch.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  const unmet = operations.filter((operation) => !met.has(operation) && !outside.includes(operation) && !/\/workflows\/hooks\/|^[A-Z]+ \/admin\//.test(operation));
  expect(unmet.sort()).toEqual([]);
});
