/**
 * Waiters and notify answers (docs/hosted-api.md §13.3, the hosted
 * description's `Waiter` and `NotifyResponse`), read with the official
 * client's `getWaiters` and `notify`: a waiter shows `timeoutBody` as its
 * wait gave it (absent for the SDK's own waits), and each notified waiter
 * carries `error` and `deduplicated`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startActiveRun, startWorkflowApp, unfinishedRun, waitForReport, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
let app: WorkflowApp;
const workflow = useReceiver(unfinishedRun);
const continuation = useReceiver();
const reports = new Map<string, unknown>();

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/waits": {
      route: async (context) => {
        const { eventData } = await context.waitForEvent("wait", `evt-${context.workflowRunId}`, { timeout: "1h" });
        reports.set(context.workflowRunId, eventData);
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

/** `POST /v2/wait/{eventId}` for active run `runId`, as the SDK's wait request is shaped (its `WaitRequest` type). */
async function registerWait(runId: string, eventId: string, extra: Record<string, unknown>) {
  const response = await dispatch.api(`/v2/wait/${eventId}`, {
    method: "POST",
    headers: { "Upstash-Workflow-RunId": runId, "Upstash-Workflow-Url": `${continuation.url}/wf`, "Upstash-Workflow-Init": "false" },
    body: JSON.stringify({
      url: `${continuation.url}/wf`,
      timeout: "1h",
      timeoutUrl: `${continuation.url}/timeout`,
      timeoutHeaders: { "Upstash-Workflow-Runid": [runId] },
      step: { stepId: 1, stepType: "Wait", stepName: "wait", concurrent: 1 },
      ...extra,
    }),
  });
  expect(response.status).toBe(200);
}

describe("waiters", () => {
  it("show an SDK wait without timeoutBody, as the hosted service answers the SDK", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/waits") });
    const eventId = `evt-${workflowRunId}`;
    const [waiter] = await poll(async () => {
      const waiters = await app.client.getWaiters({ eventId });
      return waiters.length > 0 && waiters;
    }, `a waiter for ${eventId}`);
    expect(waiter).toEqual({
      url: app.url("/waits"),
      deadline: expect.any(Number),
      headers: expect.objectContaining({ "Upstash-Workflow-Runid": [workflowRunId] }),
      timeoutUrl: app.url("/waits"),
      timeoutHeaders: expect.objectContaining({ "Upstash-Workflow-Runid": [workflowRunId] }),
    });
    expect(waiter!.deadline).toBeGreaterThan(Date.now() / 1000 + 3500);

    const notified = await app.client.notify({ eventId, eventData: { ok: true } });
    expect(notified).toEqual([
      {
        waiter,
        messageId: expect.stringMatching(/^msg_/),
        deduplicated: false,
        error: "",
        workflowRunId,
        workflowCreatedAt: expect.any(Number),
      },
    ]);
    expect(await waitForReport(reports, workflowRunId)).toEqual({ ok: true });
    expect(await app.client.getWaiters({ eventId })).toEqual([]);
  });

  it("show the timeoutBody a wait gave, which never reaches the continuation", async () => {
    const runId = await startActiveRun(dispatch, workflow);
    const eventId = `evt-body-${runId}`;
    const timeoutBody = Buffer.from("timed out").toString("base64");
    await registerWait(runId, eventId, { timeoutBody });
    const [waiter] = await app.client.getWaiters({ eventId });
    expect(waiter).toMatchObject({ url: `${continuation.url}/wf`, timeoutUrl: `${continuation.url}/timeout`, timeoutBody });

    const arrived = continuation.requests.length;
    const [notified] = await app.client.notify({ eventId, eventData: "data", workflowRunId: runId });
    expect(notified).toMatchObject({ waiter: { timeoutBody }, deduplicated: false, error: "", workflowRunId: runId });
    const [request] = (await continuation.waitFor(arrived + 1)).slice(arrived);
    const steps = JSON.parse(request!.body.toString()) as { body: string }[];
    const step = JSON.parse(Buffer.from(steps.at(-1)!.body, "base64").toString());
    expect(step).toEqual({
      stepId: 1,
      stepType: "Wait",
      stepName: "wait",
      concurrent: 1,
      waitEventId: eventId,
      timeout: "1h",
      waitTimeout: false,
      out: Buffer.from("data").toString("base64"),
    });
  });

  it("answer an error for a waiter whose run has ended: the event is only recorded", async () => {
    const runId = await startActiveRun(dispatch, workflow);
    const eventId = `evt-ended-${runId}`;
    await registerWait(runId, eventId, {});
    const ended = await dispatch.api(`/v2/workflows/runs/${runId}?cancel=false`, { method: "DELETE", body: '"done"' });
    expect(ended.status).toBe(200);
    const notified = await app.client.notify({ eventId, eventData: "late" });
    expect(notified).toEqual([
      expect.objectContaining({ deduplicated: false, error: expect.stringMatching(/has ended/), workflowRunId: runId }),
    ]);
    expect(notified[0]).not.toHaveProperty("waiter.timeoutBody");
  });
});
