/**
 * Workflow run logs, read with the official workflow `Client` (`client.logs`,
 * which calls `/v2/workflows/events?groupBy=workflowRunId`) and with plain
 * requests to `/v2/workflows/logs`, for runs of real `serve()` workflows.
 */
import type { InvokableWorkflow, WorkflowRunLog } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

/** Workflow sleeps are scaled (DISPATCH_DELAY_SCALE): a 1 s sleep waits 10 ms; the logs keep 1 s. */
const dispatch = useDispatch({ delayScale: 0.01 });
let app: WorkflowApp;
const thirdParty = useReceiver(() => ({ status: 201, headers: { "X-Reply": "r" }, body: "echo" }));

type LogsParams = NonNullable<Parameters<WorkflowApp["client"]["logs"]>[0]>;
// The SDK types a step as a union per step kind; assertions read them as plain JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Step = Record<string, any> & { messageId: string; state: string; createdAt: number };
type RunLog = Omit<WorkflowRunLog, "steps"> & { steps: { type: string; steps: Step[] }[] };

/** `client.logs`, as the official SDK calls it. */
const logs = async (params: LogsParams) => (await app.client.logs(params)) as { cursor?: string; runs: RunLog[] };

/** Reads logs until `done` holds (the runs move on in the background). */
async function logsUntil(params: LogsParams, done: (runs: RunLog[]) => boolean): Promise<RunLog[]> {
  let runs: RunLog[] = [];
  return poll(async () => {
    runs = (await logs(params)).runs;
    return done(runs) && runs;
  }, () => `logs to match; last: ${JSON.stringify(runs)}`);
}

/** The one run with `workflowRunId`, once `done` holds for it. */
const runUntil = async (workflowRunId: string, done: (run: RunLog) => boolean) =>
  (await logsUntil({ filter: { workflowRunId } }, (runs) => runs.length === 1 && done(runs[0]!)))[0]!;

const groupTypes = (run: RunLog) => run.steps.map((group) => group.type);
const nextGroup = (run: RunLog) => run.steps.find((group) => group.type === "next");
const ids = (runs: RunLog[]) => runs.map((run) => run.workflowRunId);

/** What `context.invoke` needs of a workflow: its id, which names the sibling route (`/child`). */
const child = { routeFunction: async () => undefined, options: {}, workflowId: "child" };
const invokable = child as unknown as InvokableWorkflow<unknown, unknown>;

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/all": {
      route: async (context) => {
        await context.run("first", () => ({ n: 1 }));
        await Promise.all([context.run("a", () => "A"), context.run("b", () => "B")]);
        await context.sleep("nap", 1);
        await context.call("call", {
          url: `${thirdParty.url}/echo`,
          method: "POST",
          body: JSON.stringify({ q: 1 }),
          headers: { "X-Test": "yes" },
        });
        await context.waitForEvent("wait", `evt-${context.workflowRunId}`, { timeout: "30s" });
        return "done";
      },
    },
    "/quick": { route: async (context) => context.run("only", () => context.requestPayload) },
    "/quick-b": { route: async (context) => context.run("only", () => "b") },
    "/page": { route: async (context) => context.run("only", () => 1) },
    "/sleepy": { route: async (context) => context.sleep("long", 3600) },
    "/retrying": {
      route: async (context) => {
        await context.run("flaky", () => {
          throw new Error("flaky exploded");
        });
      },
    },
    "/failing": {
      route: async (context) => {
        await context.run("boom", () => {
          throw new Error("boom exploded");
        });
      },
      options: { failureFunction: async () => "handled" },
    },
    "/parent": {
      route: async (context) => {
        const invoke = { workflow: invokable, body: { n: 2 }, headers: { "X-Inv": "1" } };
        const { body } = await context.invoke("delegate", invoke);
        return body;
      },
    },
    "/child": {
      route: async (context) => context.run("double", () => (context.requestPayload as { n: number }).n * 2),
    },
  });
});
afterAll(async () => {
  await app.close();
});

describe("a finished run", () => {
  it("logs the initial payload and every step: run, parallel, sleep, call, wait", async () => {
    const { workflowRunId } = await app.client.trigger({
      url: app.url("/all"),
      body: { hello: "world" },
      label: "lab-all",
    });
    const eventId = `evt-${workflowRunId}`;
    await poll(async () => (await app.client.getWaiters({ eventId })).length > 0, `a waiter for ${eventId}`);
    await app.client.notify({ eventId, eventData: { ok: true } });
    const run = await runUntil(workflowRunId, (r) => r.workflowState === "RUN_SUCCESS");

    expect(run).toMatchObject({
      workflowRunId,
      workflowUrl: app.url("/all"),
      workflowState: "RUN_SUCCESS",
      workflowRunResponse: '"done"',
      workflowRunCallerIp: "127.0.0.1",
      label: "lab-all",
      labels: ["lab-all"],
    });
    expect(run.workflowRunCompletedAt).toBeGreaterThanOrEqual(run.workflowRunCreatedAt);
    expect(groupTypes(run)).toEqual(["sequential", "sequential", "parallel", "sequential", "sequential", "sequential"]);
    const [init, first, parallel, nap, call, wait] = run.steps.map((group) => group.steps);

    expect(init).toEqual([
      expect.objectContaining({
        stepName: "init",
        stepType: "Initial",
        callType: "step",
        messageId: expect.stringMatching(/^msg_/),
        out: '{"hello":"world"}',
        concurrent: 1,
        state: "STEP_SUCCESS",
        createdAt: run.workflowRunCreatedAt,
      }),
    ]);
    expect(init![0]).not.toHaveProperty("stepId");
    const ran = { stepType: "Run", callType: "step", state: "STEP_SUCCESS" };
    expect(first).toEqual([
      expect.objectContaining({ ...ran, stepId: 1, stepName: "first", out: '{"n":1}', concurrent: 1 }),
    ]);
    expect(parallel).toEqual([
      expect.objectContaining({ ...ran, stepId: 2, stepName: "a", out: '"A"', concurrent: 2 }),
      expect.objectContaining({ ...ran, stepId: 3, stepName: "b", out: '"B"', concurrent: 2 }),
    ]);
    expect(nap).toEqual([
      expect.objectContaining({ stepId: 4, stepName: "nap", stepType: "SleepFor", sleepFor: 1000, concurrent: 1 }),
    ]);

    const sent = thirdParty.requests.find((request) => request.path === "/echo")!;
    expect(call).toEqual([
      expect.objectContaining({
        stepId: 5,
        stepName: "call",
        stepType: "Call",
        callUrl: `${thirdParty.url}/echo`,
        callMethod: "POST",
        callBody: sent.body.toString(),
        callHeaders: expect.objectContaining({ "X-Test": ["yes"] }),
        callResponseStatus: 201,
        callResponseBody: "echo",
        callResponseHeaders: expect.objectContaining({ "X-Reply": ["r"] }),
      }),
    ]);
    expect(sent.headers["x-test"]).toBe("yes");

    const waitStep = wait![0]!;
    expect(waitStep).toMatchObject({
      stepId: 6,
      stepName: "wait",
      stepType: "Wait",
      waitEventId: eventId,
      waitTimeoutDuration: "30s",
      waitTimeout: false,
      out: '{"ok":true}',
    });
    // The deadline is 30 s after the wait was registered: after the run started, before the notify.
    expect(waitStep.waitTimeoutDeadline).toBeGreaterThanOrEqual(run.workflowRunCreatedAt + 30_000);
    expect(waitStep.waitTimeoutDeadline).toBeLessThanOrEqual(waitStep.createdAt + 30_000);
    for (const step of run.steps.flatMap((group) => group.steps)) expect(step.state).toBe("STEP_SUCCESS");
  });

  it("links an invoked run and its invoker", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/parent") });
    const parent = await runUntil(workflowRunId, (r) => r.workflowState === "RUN_SUCCESS");
    const [invoked] = await logsUntil({ filter: { workflowUrl: app.url("/child") } }, (runs) => runs.length === 1);

    expect(invoked).toMatchObject({
      workflowState: "RUN_SUCCESS",
      workflowRunResponse: "4",
      invoker: { workflowRunId, workflowUrl: app.url("/parent"), workflowRunCreatedAt: parent.workflowRunCreatedAt },
    });
    expect(parent.workflowRunResponse).toBe("4");
    expect(parent.steps[1]!.steps).toEqual([
      expect.objectContaining({
        stepId: 1,
        stepName: "delegate",
        stepType: "Invoke",
        invokedWorkflowRunId: invoked!.workflowRunId,
        invokedWorkflowUrl: app.url("/child"),
        invokedWorkflowCreatedAt: invoked!.workflowRunCreatedAt,
        invokedWorkflowRunBody: '{"n":2}',
        invokedWorkflowRunHeaders: expect.objectContaining({ "X-Inv": ["1"] }),
      }),
    ]);
  });
});

describe("a run that has not finished", () => {
  it("shows the pending step as next, then as cancelled once the run is cancelled", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/sleepy") });
    // Once the init delivery has finished, only the sleeping step is under way.
    const sleeping = await runUntil(workflowRunId, (r) => r.steps.length === 3 && nextGroup(r)?.steps.length === 1);
    expect(sleeping.workflowState).toBe("RUN_STARTED");
    expect(sleeping).not.toHaveProperty("workflowRunCompletedAt");
    expect(groupTypes(sleeping)).toEqual(["sequential", "sequential", "next"]);
    const sleepStep = sleeping.steps[1]!.steps[0]!;
    expect(sleepStep).toMatchObject({ stepId: 1, stepName: "long", stepType: "SleepFor", sleepFor: 3_600_000 });
    const { messageId } = sleepStep;
    expect(nextGroup(sleeping)!.steps).toEqual([{ messageId, state: "STEP_PROGRESS", retries: 3 }]);

    const cancel = await dispatch.api(`/v2/workflows/runs/${workflowRunId}?cancel=true`, { method: "DELETE" });
    expect(cancel.status).toBe(200);
    const [cancelled] = (await logs({ filter: { workflowRunId } })).runs;
    expect(cancelled!.workflowState).toBe("RUN_CANCELED");
    expect(cancelled!.workflowRunCompletedAt).toBeGreaterThanOrEqual(cancelled!.workflowRunCreatedAt);
    expect(nextGroup(cancelled!)!.steps).toEqual([{ messageId, state: "STEP_CANCELED", retries: 3 }]);
  });

  it("shows a retrying step with its errors, step name and next delivery time", async () => {
    // A day between retries (scaled down by the test service to 86 s): the retry stays pending.
    const retrying = { url: app.url("/retrying"), retries: 2, retryDelay: "86400000" };
    const { workflowRunId } = await app.client.trigger(retrying);
    const run = await runUntil(workflowRunId, (r) => nextGroup(r)?.steps[0]?.state === "STEP_RETRY");
    const [step] = nextGroup(run)!.steps;
    expect(step).toMatchObject({
      messageId: run.steps[0]!.steps[0]!.messageId,
      stepName: "flaky",
      state: "STEP_RETRY",
      retries: 2,
      retryDelay: "86400000",
    });
    expect(step!.errors).toEqual([
      {
        error: "destination responded with status 500",
        status: 500,
        body: expect.stringContaining("flaky exploded"),
        headers: expect.objectContaining({ "Upstash-Error-Step-Name": ["flaky"] }),
        time: expect.any(Number),
      },
    ]);
    expect(step!.nextDeliveryTime).toBeGreaterThan(step!.errors[0].time);
    await dispatch.api(`/v2/workflows/runs/${workflowRunId}?cancel=true`, { method: "DELETE" });
  });
});

describe("a failed run", () => {
  it("shows the failed step and the failure function's call", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/failing"), body: "x", retries: 0 });
    const run = await runUntil(workflowRunId, (r) => r.failureFunction?.state === "CALLBACK_SUCCESS");

    expect(run.workflowState).toBe("RUN_FAILED");
    expect(run.dlqId).toMatch(/^dlq_/);
    expect(groupTypes(run)).toEqual(["sequential", "next"]);
    expect(nextGroup(run)!.steps).toEqual([
      {
        messageId: run.steps[0]!.steps[0]!.messageId,
        stepName: "boom",
        state: "STEP_FAILED",
        retries: 0,
        errors: [expect.objectContaining({ status: 500, body: expect.stringContaining("boom exploded") })],
      },
    ]);
    expect(run.failureFunction).toMatchObject({
      messageId: expect.stringMatching(/^msg_/),
      url: app.url("/failing"),
      state: "CALLBACK_SUCCESS",
      failStatus: 500,
      failResponse: expect.stringContaining("boom exploded"),
      failHeaders: expect.objectContaining({ "Upstash-Error-Step-Name": ["boom"] }),
      dlqId: run.dlqId,
      errors: [],
      responseStatus: 200,
      responseBody: expect.stringContaining("handled"),
      maxRetries: expect.any(Number),
    });
  });
});

describe("filters", () => {
  it("finds runs by id, creation time, URL, state, label, message and creation window", async () => {
    const first = await app.client.trigger({ url: app.url("/quick"), workflowRunId: "same-id", body: "one" });
    await runUntil(first.workflowRunId, (r) => r.workflowState === "RUN_SUCCESS");
    await app.client.trigger({ url: app.url("/quick"), workflowRunId: "same-id", body: "two" });
    const both = await logsUntil(
      { filter: { workflowRunId: first.workflowRunId } },
      (runs) => runs.length === 2 && runs.every((run) => run.workflowState === "RUN_SUCCESS"),
    );
    const [newer, older] = both as [RunLog, RunLog];
    expect(newer.steps[0]!.steps[0]!.out).toBe("two");
    expect(older.steps[0]!.steps[0]!.out).toBe("one");
    const labelled = await app.client.trigger({ url: app.url("/quick-b"), label: ["green", "red"] });
    await runUntil(labelled.workflowRunId, (r) => r.workflowState === "RUN_SUCCESS");

    const runsOf = async (params: LogsParams) => ids((await logs(params)).runs);
    const sameId = first.workflowRunId;
    const olderAt = older.workflowRunCreatedAt;
    expect(await runsOf({ filter: { workflowRunId: sameId, workflowCreatedAt: olderAt } })).toEqual([sameId]);
    // The SDK's deprecated top-level filters.
    expect((await logs({ workflowRunId: sameId, workflowCreatedAt: olderAt })).runs).toEqual([older]);
    expect(await runsOf({ filter: { workflowUrl: app.url("/quick-b") } })).toEqual([labelled.workflowRunId]);
    const quick = app.url("/quick");
    expect(await runsOf({ filter: { workflowUrl: quick, state: "RUN_SUCCESS" } })).toEqual([sameId, sameId]);
    expect(await runsOf({ filter: { workflowUrl: quick, state: "RUN_FAILED" } })).toEqual([]);
    expect(await runsOf({ state: "RUN_SUCCESS", workflowUrl: app.url("/quick-b") })).toEqual([labelled.workflowRunId]);
    expect(await runsOf({ filter: { label: "red" } })).toEqual([labelled.workflowRunId]);
    expect(await runsOf({ filter: { label: ["nope", "green"] } })).toEqual([labelled.workflowRunId]);
    expect(await runsOf({ filter: { label: "nope" } })).toEqual([]);
    expect((await logs({ filter: { messageId: older.steps[0]!.steps[0]!.messageId } })).runs).toEqual([older]);

    const at = newer.workflowRunCreatedAt;
    const window = async (fromDate?: number, toDate?: number) =>
      (await logs({ filter: { workflowRunId: sameId, fromDate, toDate } })).runs;
    expect(await window(at, at)).toEqual([newer]);
    expect(await window(at + 1)).toEqual([]);
    expect(await window(undefined, at - 1)).toEqual([older]);
    expect(await window(older.workflowRunCreatedAt, at)).toEqual([newer, older]);
  });
});

describe("pages", () => {
  it("pages through runs newest first, 10 at most, with a cursor only while more remain", async () => {
    const triggered = await app.client.trigger(Array.from({ length: 12 }, () => ({ url: app.url("/page") })));
    const filter = { workflowUrl: app.url("/page") };

    const first = await logs({ filter });
    expect(first.runs).toHaveLength(10);
    expect(first.cursor).toEqual(expect.any(String));
    const second = await logs({ filter, cursor: first.cursor });
    expect(second.runs).toHaveLength(2);
    expect(second.cursor).toBeUndefined();

    const all = [...first.runs, ...second.runs];
    expect(new Set(ids(all))).toEqual(new Set(triggered.map((run) => run.workflowRunId)));
    const created = all.map((run) => run.workflowRunCreatedAt);
    expect(created).toEqual([...created].sort((a, b) => b - a));

    const small = await logs({ filter, count: 5 });
    expect(ids(small.runs)).toEqual(ids(first.runs).slice(0, 5));
    expect(small.cursor).toEqual(expect.any(String));
    const url = encodeURIComponent(filter.workflowUrl);
    const clamped = await dispatch.api(`/v2/workflows/logs?workflowUrl=${url}&count=50`);
    expect((await clamped.json()).runs).toHaveLength(10);

    await logsUntil({ filter: { ...filter, state: "RUN_STARTED" } }, (runs) => runs.length === 0);
  });
});

describe("the HTTP endpoint", () => {
  it("serves the same runs at /v2/workflows/logs as the SDK's /v2/workflows/events", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/quick"), body: "raw" });
    const run = await runUntil(workflowRunId, (r) => r.workflowState === "RUN_SUCCESS");
    const response = await dispatch.api(`/v2/workflows/logs?workflowRunId=${workflowRunId}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ runs: [run] });
    const events = await dispatch.api(`/v2/workflows/events?groupBy=workflowRunId&workflowRunId=${workflowRunId}`);
    expect(await events.json()).toEqual({ runs: [run] });
  });

  it("rejects what it cannot answer", async () => {
    for (const query of [
      "/v2/workflows/logs?groupBy=messageId",
      "/v2/workflows/logs?state=DONE",
      "/v2/workflows/logs?count=0",
      "/v2/workflows/logs?cursor=abc",
      "/v2/workflows/logs?workflowCreatedAt=yesterday",
      "/v2/workflows/logs?runId=x",
    ]) {
      const response = await dispatch.api(query);
      expect(response.status, query).toBe(400);
      expect(await response.json(), query).toEqual({ error: expect.any(String) });
    }
    expect((await fetch(`${dispatch.baseUrl}/v2/workflows/logs`)).status).toBe(401);
  });
});
