/**
 * Workflow runs are each project's: the official SDK runs a workflow in two
 * projects at once, each app calling with its project's token and verifying
 * its project's signatures. A run id names a run within its project only;
 * logs, run reads and cancels see a token's own project; a notify wakes the
 * waiters of its own project, however their event ids match.
 */
import type { RouteFunction } from "@upstash/workflow";
import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useDispatch } from "../support/service";
import { startWorkflowApp, waitForReport, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const reports = new Map<string, unknown>();
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

beforeAll(async () => {
  mine = await startWorkflowApp(dispatch, { "/wf": { route: waits("default") } });
  theirs = await startWorkflowApp(dispatch, { "/wf": { route: waits("acme") } }, { token: acme.token });
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
