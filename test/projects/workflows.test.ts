/**
 * Workflow runs are each project's: the official SDK runs a workflow in two
 * projects at once, each app calling with its project's token and verifying
 * its project's signatures. A run id names a run within its project only;
 * logs, run reads, cancels, steps and the workflow DLQ see a token's own
 * project; a notify wakes the waiters of its own project, however their event
 * ids match, and a webhook URL those of its user id's project.
 */
import type { RouteFunction } from "@upstash/workflow";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ACCESS_TOKENS_CHANNEL, tokenDigest } from "../../src/domain/access-tokens/access-tokens";
import { dashboardSession } from "../support/dashboard-session";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useDispatch } from "../support/service";
import { startWorkflowApp, waitForReport, type WorkflowApp, type WorkflowRoute } from "../support/workflow-app";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
/** A second token of acme's, as a workflow app holds one: base64 JSON whose UserID its webhook URLs carry. */
const ACME_APP_TOKEN = Buffer.from(JSON.stringify({ UserID: "acme-user", Password: "acme-password" })).toString("base64");
const reports = new Map<string, unknown>();
/** Projects whose `/fails` workflow fails its second step for now. */
const failing = new Set<string>();
let mine: WorkflowApp;
let theirs: WorkflowApp;

/** A step, then a wait for the event the payload names; reports under `project:runId`. */
const waits =
  (project: string): RouteFunction<unknown, unknown> =>
  async (context) => {
    const { eventId } = context.requestPayload as { eventId: string };
    const n = await context.run("first", () => 1);
    const { eventData } = await context.waitForEvent("wait", eventId, { timeout: "1h" });
    reports.set(`${project}:${context.workflowRunId}`, { n, eventData });
  };

/** Two steps, the second failing while `failing` holds the project; reports "done" under `project:runId`. */
const fails =
  (project: string): RouteFunction<unknown, unknown> =>
  async (context) => {
    await context.run("first", () => 1);
    await context.run("second", () => {
      if (failing.has(project)) throw new Error(`${project}'s second step fails`);
      return 2;
    });
    reports.set(`${project}:${context.workflowRunId}`, "done");
  };

/** Waits for a call of its webhook; reports the URL under `project:runId:url`, then the call's body under `project:runId`. */
const hooked =
  (project: string): RouteFunction<unknown, unknown> =>
  async (context) => {
    const webhook = await context.createWebhook("hook");
    reports.set(`${project}:${context.workflowRunId}:url`, webhook.webhookUrl);
    const { request } = await context.waitForWebhook("called", webhook, "1h");
    reports.set(`${project}:${context.workflowRunId}`, await request?.text());
  };

const routes = (project: string): Record<string, WorkflowRoute> => ({
  "/wf": { route: waits(project) },
  "/fails": { route: fails(project) },
  "/hooked": { route: hooked(project) },
});

beforeAll(async () => {
  const sql = dispatch.service.sql;
  await sql`
    insert into dispatch.access_tokens (name, project, digest, read_only, user_id)
    values ('acme-app', ${acme.name}, ${tokenDigest(ACME_APP_TOKEN)}, false, 'acme-user')`;
  await sql`select pg_notify(${ACCESS_TOKENS_CHANNEL}, '')`;
  mine = await startWorkflowApp(dispatch, routes("default"));
  theirs = await startWorkflowApp(dispatch, routes("acme"), { token: ACME_APP_TOKEN });
});
afterAll(async () => {
  await mine?.close();
  await theirs?.close();
});

type Api = typeof dispatch.api;

/** The project's runs as `GET /v2/workflows/logs` lists them: id → state. */
async function runStates(api: Api): Promise<Record<string, string>> {
  const response = await api("/v2/workflows/logs");
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return Object.fromEntries(body.runs.map((run: { workflowRunId: string; workflowState: string }) => [run.workflowRunId, run.workflowState]));
}

/** `POST /v2/notify/[{runId}/]{eventId}` with the project's token; the ids of the runs it woke. */
async function notify(api: Api, eventId: string, data: string, runId?: string): Promise<string[]> {
  const response = await api(`/v2/notify/${runId === undefined ? "" : `${runId}/`}${eventId}`, { method: "POST", body: JSON.stringify(data) });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.map((woken: { workflowRunId: string; error: string }) => {
    expect(woken.error).toBe("");
    return woken.workflowRunId;
  });
}

/** Waits until the app's project has a waiter for `eventId`; returns its waiters. */
const waitersOf = (app: WorkflowApp, eventId: string) =>
  poll(async () => {
    const waiters = await app.client.getWaiters({ eventId });
    return waiters.length > 0 && waiters;
  }, `a waiter for ${eventId}`);

it("runs a workflow in each of two projects at once, each seeing, reading and cancelling its own runs only", async () => {
  const eventId = "evt-shared";
  const [{ workflowRunId: ours }, { workflowRunId: acmes }] = await Promise.all([
    mine.client.trigger({ url: mine.url("/wf"), body: { eventId }, workflowRunId: "default-1" }),
    theirs.client.trigger({ url: theirs.url("/wf"), body: { eventId }, workflowRunId: "acme-1" }),
  ]);
  // Each project's waiter is its own, on the same event id.
  const [ourWaiters, acmeWaiters] = await Promise.all([waitersOf(mine, eventId), waitersOf(theirs, eventId)]);
  expect(ourWaiters.map((waiter) => waiter.url)).toEqual([mine.url("/wf")]);
  expect(acmeWaiters.map((waiter) => waiter.url)).toEqual([theirs.url("/wf")]);

  // Each project's logs list its runs only.
  expect(await runStates(dispatch.api)).toEqual({ [ours]: "RUN_STARTED" });
  expect(await runStates(acme.api)).toEqual({ [acmes]: "RUN_STARTED" });

  // The other project's run id is unknown: reading or cancelling it is a 404, and the run goes on.
  const read = await acme.api(`/v2/workflows/runs/${ours}`);
  expect(read.status).toBe(404);
  expect(await read.json()).toEqual({ error: expect.stringContaining(ours) });
  const cancel = await acme.api(`/v2/workflows/runs/${ours}?cancel=true`, { method: "DELETE" });
  expect(cancel.status).toBe(404);
  expect(await cancel.json()).toEqual({ error: expect.stringContaining(ours) });
  const bulk = await acme.api("/v2/workflows/runs", { method: "DELETE", body: JSON.stringify({ workflowRunIds: [ours] }) });
  expect(bulk.status).toBe(200);
  expect(await bulk.json()).toEqual({ cancelled: 0 });
  const own = await dispatch.api(`/v2/workflows/runs/${ours}`);
  expect(own.status).toBe(200);
  expect(Array.isArray(await own.json())).toBe(true);
  expect(await runStates(dispatch.api)).toEqual({ [ours]: "RUN_STARTED" });
  // A step acme publishes naming the default project's run finds no run of acme's by that id.
  const step = await acme.api(`/v2/publish/${mine.url("/wf")}`, {
    method: "POST",
    headers: { "Upstash-Workflow-RunId": ours, "Upstash-Workflow-Init": "false", "Upstash-Method": "POST" },
    body: "[]",
  });
  expect(step.status).toBe(400);
  expect((await step.json()).error).toMatch(/does not exist or has already ended/);
  // acme's dashboard lists and opens its own run only.
  const { cookie } = await dashboardSession(dispatch.baseUrl, acme.token);
  const page = (path: string) => fetch(`${dispatch.baseUrl}/dashboard${path}`, { headers: { cookie } });
  const list = await (await page("/workflows")).text();
  expect(list).toContain(acmes);
  expect(list).not.toContain(ours);
  expect((await page(`/workflows/${acmes}`)).status).toBe(200);
  expect((await page(`/workflows/${ours}`)).status).toBe(404);

  // acme's notify wakes acme's waiter only.
  expect(await notify(acme.api, eventId, "for acme")).toEqual([acmes]);
  expect(await waitForReport(reports, `acme:${acmes}`)).toEqual({ n: 1, eventData: "for acme" });
  expect(reports.has(`default:${ours}`)).toBe(false);
  expect((await mine.client.getWaiters({ eventId })).map((waiter) => waiter.url)).toEqual([mine.url("/wf")]);
  await poll(async () => (await runStates(acme.api))[acmes] === "RUN_SUCCESS", "acme's run to succeed");
  expect((await runStates(dispatch.api))[ours]).toBe("RUN_STARTED");

  // The default project's notify then wakes its own.
  expect(await notify(dispatch.api, eventId, "for default")).toEqual([ours]);
  expect(await waitForReport(reports, `default:${ours}`)).toEqual({ n: 1, eventData: "for default" });
  await poll(async () => (await runStates(dispatch.api))[ours] === "RUN_SUCCESS", "the default project's run to succeed");
});

it("runs one run id in two projects at once, each its own run", async () => {
  const [{ workflowRunId: ours }, { workflowRunId: acmes }] = await Promise.all([
    mine.client.trigger({ url: mine.url("/wf"), body: { eventId: "evt-same" }, workflowRunId: "same" }),
    theirs.client.trigger({ url: theirs.url("/wf"), body: { eventId: "evt-same" }, workflowRunId: "same" }),
  ]);
  expect(acmes).toBe(ours);
  await Promise.all([waitersOf(mine, "evt-same"), waitersOf(theirs, "evt-same")]);
  // A notify naming the run reaches that project's run of the id only.
  expect(await notify(acme.api, "evt-same", "acme", acmes)).toEqual([acmes]);
  expect(await waitForReport(reports, `acme:${acmes}`)).toEqual({ n: 1, eventData: "acme" });
  expect(reports.has(`default:${ours}`)).toBe(false);
  expect(await notify(dispatch.api, "evt-same", "default", ours)).toEqual([ours]);
  expect(await waitForReport(reports, `default:${ours}`)).toEqual({ n: 1, eventData: "default" });
  await poll(async () => (await runStates(acme.api))[acmes] === "RUN_SUCCESS", "acme's run to succeed");
  await poll(async () => (await runStates(dispatch.api))[ours] === "RUN_SUCCESS", "the default project's run to succeed");
});

/** The parts of a webhook URL `/v2/workflows/hooks/{userId}/{runId}/{eventId}`. */
function hookOf(url: string): { userId: string; runId: string; eventId: string } {
  const match = /^\/v2\/workflows\/hooks\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(new URL(url).pathname);
  if (match === null) throw new Error(`not a webhook URL: ${url}`);
  const [, userId = "", runId = "", eventId = ""] = match;
  return { userId, runId, eventId };
}

it("calls a webhook URL in the project of the token whose user id it carries", async () => {
  const [{ workflowRunId: ours }, { workflowRunId: acmes }] = await Promise.all([
    mine.client.trigger({ url: mine.url("/hooked"), workflowRunId: "hooked" }),
    theirs.client.trigger({ url: theirs.url("/hooked"), workflowRunId: "hooked" }),
  ]);
  expect(acmes).toBe(ours);
  const acmeUrl = await waitForReport<string>(reports, `acme:${acmes}:url`);
  const ourUrl = await waitForReport<string>(reports, `default:${ours}:url`);
  const acmeHook = hookOf(acmeUrl);
  expect(acmeHook).toMatchObject({ userId: "acme-user", runId: acmes });
  expect(hookOf(ourUrl)).toMatchObject({ userId: "test-user", runId: ours });
  await waitersOf(theirs, acmeHook.eventId);

  // acme's run and event ids under the default project's user id reach the default project's run of that id (which waits for another event).
  const misdirected = await fetch(`${dispatch.baseUrl}/v2/workflows/hooks/test-user/${acmes}/${acmeHook.eventId}`, {
    method: "POST",
    body: "misdirected",
  });
  expect(misdirected.status).toBe(200);
  expect(await theirs.client.getWaiters({ eventId: acmeHook.eventId })).toHaveLength(1);
  expect(reports.has(`acme:${acmes}`)).toBe(false);

  const called = await fetch(acmeUrl, { method: "POST", body: "for acme" });
  expect(called.status).toBe(200);
  expect(await waitForReport(reports, `acme:${acmes}`)).toBe("for acme");
  expect(reports.has(`default:${ours}`)).toBe(false);
  expect((await fetch(ourUrl, { method: "POST", body: "for default" })).status).toBe(200);
  expect(await waitForReport(reports, `default:${ours}`)).toBe("for default");
});

/** The app's project's workflow DLQ entries, once it has any. */
const dlqOf = (app: WorkflowApp) =>
  poll(async () => {
    const { messages } = await app.client.dlq.list();
    return messages.length > 0 && messages;
  }, "a workflow DLQ entry");

it("keeps a failed run's workflow DLQ entry to its project: listed, read, resumed and deleted there only", async () => {
  failing.add("default");
  failing.add("acme");
  const [{ workflowRunId: ours }, { workflowRunId: acmes }] = await Promise.all([
    mine.client.trigger({ url: mine.url("/fails"), workflowRunId: "failing", retries: 0 }),
    theirs.client.trigger({ url: theirs.url("/fails"), workflowRunId: "failing", retries: 0 }),
  ]);
  const [[ourEntry], [acmeEntry]] = await Promise.all([dlqOf(mine), dlqOf(theirs)]);
  expect(ourEntry).toMatchObject({ workflowRunId: ours, workflowUrl: mine.url("/fails") });
  expect(acmeEntry).toMatchObject({ workflowRunId: acmes, workflowUrl: theirs.url("/fails") });
  expect((await mine.client.dlq.list()).messages.map((entry) => entry.dlqId)).toEqual([ourEntry?.dlqId]);
  expect((await theirs.client.dlq.list()).messages.map((entry) => entry.dlqId)).toEqual([acmeEntry?.dlqId]);

  // The default project's entry is unknown to acme.
  const ourId = `${ourEntry?.dlqId}`;
  for (const [method, path] of [
    ["GET", ourId],
    ["DELETE", ourId],
    ["POST", `resume/${ourId}`],
    ["POST", `restart/${ourId}`],
    ["POST", `callback/${ourId}`],
  ] as const) {
    const response = await acme.api(`/v2/workflows/dlq/${path}`, { method });
    expect(response.status, `${method} ${path}`).toBe(404);
    expect(await response.json()).toEqual({ error: expect.stringContaining(ourId) });
  }
  expect(await theirs.client.dlq.resume({ dlqId: ourId })).toBeUndefined();
  expect(await theirs.client.dlq.delete(ourId)).toEqual({ deleted: 0 });
  expect((await mine.client.dlq.list()).messages.map((entry) => entry.dlqId)).toEqual([ourId]);

  // Its own project resumes it; acme's entry stays, until acme deletes it.
  failing.delete("default");
  const resumed = await mine.client.dlq.resume({ dlqId: ourId });
  expect(await waitForReport(reports, `default:${resumed?.workflowRunId}`)).toBe("done");
  expect((await mine.client.dlq.list()).messages).toEqual([]);
  expect((await theirs.client.dlq.list()).messages.map((entry) => entry.dlqId)).toEqual([acmeEntry?.dlqId]);
  expect(await theirs.client.dlq.delete(`${acmeEntry?.dlqId}`)).toEqual({ deleted: 1 });
  expect((await theirs.client.dlq.list()).messages).toEqual([]);
});

it("writes each step and each attempt with its run's and its message's project (what Citus distributes them on)", async () => {
  const db = dispatch.service.sql;
  // Joined on the project too (on Citus a join must name it): a row whose project differs would drop out of the join.
  const count = async (table: string) => (await db<{ n: number }[]>`select count(*)::int as n from ${db(table)}`)[0]!.n;
  const [steps] = await db<{ joined: number; projects: string[] }[]>`
    select count(*)::int as joined, array_agg(distinct s.project order by s.project) as projects
    from dispatch.workflow_steps s join dispatch.workflow_runs r on r.pk = s.run_pk and r.project = s.project`;
  expect(steps).toEqual({ joined: await count("dispatch.workflow_steps"), projects: ["acme", "default"] });
  // Delivered attempts are written in batches (recorder), the others with their outcome (delivery/outcome.ts).
  const [attempts] = await db<{ joined: number; kinds: string[] }[]>`
    select count(*)::int as joined, array_agg(distinct a.project || ' ' || a.result order by a.project || ' ' || a.result) as kinds
    from dispatch.attempts a join dispatch.messages m on m.id = a.message_id and m.project = a.project`;
  expect(attempts).toEqual({
    joined: await count("dispatch.attempts"),
    kinds: ["acme DELIVERED", "acme ERROR", "default DELIVERED", "default ERROR"],
  });
});
