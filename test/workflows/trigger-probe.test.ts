/**
 * The REST trigger's unknown-SDK probe (docs/workflow-protocol.md §3.4), as
 * the workflow SDK's own CI app `qstash-trigger-fetch` drives it: a main
 * workflow triggers a second one over `POST /v2/trigger` twice, once asking
 * for the probe (`Upstash-Workflow-Unknown-Sdk: true`) and once not, and
 * waits for both to call its webhook; the hosted service calls the two
 * workflows' endpoint 16 times. A destination that answers like an SDK older
 * than v1 fails the run with the SDK's error, probed or not.
 */
import type { WorkflowContext } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REST_TRIGGER_NEEDS_V1, SDK_VERSION_HEADER } from "../../src/domain/headers/workflow";
import { poll } from "../support/poll";
import { type Received, type Receiver, type Reply, startReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { startWorkflowApp, waitForReport, type WorkflowApp } from "../support/workflow-app";

const MiB = 1024 * 1024;
/** Sleeps are scaled (a 2 s sleep waits 20 ms); the large trigger body needs the size limit raised, as in fidelity.test.ts. */
// Exact call counts: a worker taken for dead (the fixture's 3 s without a heartbeat, which a loaded CI machine
// can stall past while this process parses megabytes of JSON) would have its steps attempted twice.
const dispatch = useDispatch({ delayScale: 0.01, maxMessageBytes: 8 * MiB, workerDeadAfterMs: 30_000 });
let app: WorkflowApp;
/** Sits in front of the second workflow and records what its endpoint got, the probe included. */
let secondEndpoint: Receiver;
/** Answers like the CI app's `/post` route: `Upstash-Workflow-Sdk-Version: 1`, no `Upstash-Workflow-Sdk`. */
let preV1Endpoint: Receiver;
const reports = new Map<string, unknown>();

const TRIGGER_HEADER = "x-qstash-trigger-test";
const TRIGGER_VALUE = "qstash-trigger-test-value";
const WEBHOOK_RESULT = "workflow-webhook-completed";
/** The CI app's large object is 5 MiB. */
const largeObject = "x".repeat(5 * MiB);

/** `POST /v2/trigger/{url}` as the CI app sends it: forwarded headers, no retries, the probe when asked. */
async function triggerOverRest(url: string, body: unknown, probe: boolean): Promise<string> {
  const response = await fetch(`${dispatch.baseUrl}/v2/trigger/${url}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Authorization: `Bearer ${TEST_TOKEN}`,
      [`upstash-forward-${TRIGGER_HEADER}`]: TRIGGER_VALUE,
      "Upstash-Retries": "0",
      ...(probe && { "Upstash-Workflow-Unknown-Sdk": "true" }),
    },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`trigger answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { workflowRunId: string }).workflowRunId;
}

/** The run's log once it has ended: its state, its step groups and the first error of its second group. */
async function endedRun(workflowRunId: string) {
  const run = await poll(async () => {
    const { runs } = await app.client.logs({ workflowRunId });
    return runs[0] && runs[0].workflowState !== "RUN_STARTED" && runs[0];
  }, `run ${workflowRunId} to end`);
  const second = run.steps[1]?.steps[0] as { errors?: { error: string }[] } | undefined;
  return { state: run.workflowState, groups: run.steps.length, error: second?.errors?.[0]?.error };
}

/** The CI app's main workflow, step for step (its `saveResult` becomes a report). */
async function mainWorkflow(context: WorkflowContext<unknown>) {
  const webhook = await context.createWebhook("create webhook");
  const second = `${secondEndpoint.url}/webhookWorkflow`;
  const probed = await context.run("call workflow endpoint", () =>
    triggerOverRest(second, { webhookUrl: webhook.webhookUrl, largeObject }, true),
  );
  const direct = await context.run("call workflow endpoint", () => triggerOverRest(second, { webhookUrl: webhook.webhookUrl }, false));
  const preV1 = await context.run("call post endpoint", () => triggerOverRest(`${preV1Endpoint.url}/post`, { data: "test-data" }, false));
  const events: unknown[] = [];
  for (let i = 0; i < 2; i++) {
    // A day, not the CI app's 30 s: this Dispatch scales delays by 0.01, and 0.3 s was too short for the
    // event on a loaded machine (the test expects no timeout, and waits on none).
    const { timeout, request } = await context.waitForWebhook("wait for webhook", webhook, "1d");
    events.push({ timeout, body: await request?.json() });
  }
  const preV1Run = await context.run("verify complete", () => endedRun(preV1));
  await context.sleep("sleep before finish to ensure all requests arrive", 2);
  reports.set("main", { runId: context.workflowRunId, probed, direct, preV1, preV1Run, events, header: context.headers.get("x-test") });
}

/** The CI app's second workflow: a step, then a call to the main workflow's webhook. */
async function webhookWorkflow(context: WorkflowContext<unknown>) {
  const { webhookUrl } = context.requestPayload as { webhookUrl: string };
  if (context.headers.get(TRIGGER_HEADER) !== TRIGGER_VALUE) throw new Error(`no ${TRIGGER_HEADER} header`);
  await context.run("do work", () => "work completed");
  return context.run("call webhook", async () => {
    const response = await fetch(webhookUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ result: WEBHOOK_RESULT }),
    });
    if (!response.ok) throw new Error(`webhook call failed with status ${response.status}`);
    return response.ok;
  });
}

/** Hands a request the second endpoint got to the workflow app, and its answer back. */
async function forwardToApp(request: Received): Promise<Reply> {
  const headers = Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name));
  const answer = await fetch(app.url(request.path), {
    method: request.method,
    headers: headers.map(([name, value]) => [name, [value].flat().join(", ")]),
    body: request.body,
  });
  const answerHeaders = [...answer.headers].filter(([name]) => !["content-length", "transfer-encoding", "connection"].includes(name));
  return { status: answer.status, headers: Object.fromEntries(answerHeaders), body: Buffer.from(await answer.arrayBuffer()) };
}

beforeAll(async () => {
  secondEndpoint = await startReceiver(forwardToApp);
  preV1Endpoint = await startReceiver((): Reply => ({ status: 200, headers: { [SDK_VERSION_HEADER]: "1" }, body: "{}" }));
  app = await startWorkflowApp(dispatch, {
    "/mainWorkflow": { route: mainWorkflow },
    // The SDK names itself by the endpoint's public URL, the recording hop in front of it.
    "/webhookWorkflow": { route: webhookWorkflow, options: { url: `${secondEndpoint.url}/webhookWorkflow` } },
  });
});
afterAll(async () => {
  await app.close();
  await secondEndpoint.close();
  await preV1Endpoint.close();
});

describe("the unknown-SDK probe of a REST trigger", () => {
  it("is made only when the trigger asks for it, and the endpoint is called as often as the hosted service calls it", async () => {
    const { workflowRunId } = await app.client.trigger({
      url: app.url("/mainWorkflow"),
      body: { test: "qstash-trigger-payload" },
      headers: { "x-test": "qstash-trigger-header-value" },
      retries: 0,
    });
    // The large object goes through most of these calls, and the SDK decodes each step list in JavaScript (a
    // second for 5 MiB on a slow machine): a loaded CI machine took 63 s, beyond the default test timeout.
    const main = await waitForReport<Record<string, any>>(reports, "main", 150_000);
    expect(main).toMatchObject({ runId: workflowRunId, header: "qstash-trigger-header-value" });
    expect(main.events).toEqual([
      { timeout: false, body: { result: WEBHOOK_RESULT } },
      { timeout: false, body: { result: WEBHOOK_RESULT } },
    ]);
    // The CI app's /post route: a REST trigger answered without `Upstash-Workflow-Sdk` fails its run (§3.4).
    expect(main.preV1Run).toEqual({ state: "RUN_FAILED", groups: 2, error: REST_TRIGGER_NEEDS_V1 });
    for (const runId of [workflowRunId, main.probed, main.direct]) expect((await endedRun(runId)).state).toBe("RUN_SUCCESS");

    // The calls the hosted service makes (the CI app's expectedCallCount, 16):
    //   main workflow, 9:  1 init -> createWebhook; 2 -> trigger with the probe; 3 -> trigger without;
    //     4 -> trigger /post (not this endpoint); 5 -> first waitForWebhook; 6 first event -> second
    //     waitForWebhook; 7 second event -> "verify complete"; 8 -> sleep; 9 after the sleep -> ends the run.
    //   second workflow, probed run, 4:  10 the probe -> the SDK re-publishes the init
    //     (`upstash-workflow-trigger-by-sdk`), which replaces the placeholder; 11 that init -> "do work";
    //     12 -> "call webhook"; 13 -> ends the run.
    //   second workflow, run triggered without the probe, 3:  14 init -> "do work"; 15 -> "call webhook"; 16 -> ends.
    // Without the probe (Dispatch before) the probed run got 3 calls: 15 in all.
    expect(Object.fromEntries(app.calls)).toEqual({ "/mainWorkflow": 9, "/webhookWorkflow": 7 });
    expect([...app.calls.values()].reduce((a, b) => a + b)).toBe(16);

    const probes = secondEndpoint.requests.filter((request) => request.headers["upstash-workflow-unknown-sdk"] !== undefined);
    expect(probes.map((probe) => [probe.headers["upstash-workflow-runid"], probe.headers["upstash-workflow-unknown-sdk"]])).toEqual([
      [main.probed, "true"],
    ]);
    // The SDK's re-published init repeats none of the trigger's configuration; it still applies to the whole run.
    const configs = await dispatch.service.sql`
      select distinct m.max_retries as "maxRetries", m.failure_callback as "failureCallback" from dispatch.messages m
      join dispatch.workflow_runs r on r.pk = m.workflow_run_pk where r.run_id = ${main.probed} and m.workflow_call_type = 'step'`;
    expect(configs).toEqual([{ maxRetries: 0, failureCallback: `${secondEndpoint.url}/webhookWorkflow` }]);
    const runOf = (runId: string) => secondEndpoint.requests.filter((request) => request.headers["upstash-workflow-runid"] === runId);
    expect(runOf(main.probed)).toHaveLength(4);
    expect(runOf(main.direct)).toHaveLength(3);
    // The run triggered without the probe got the v1 init at once: the run's input as the only step, SDK version 1.
    const [init] = runOf(main.direct);
    expect(init!.headers[SDK_VERSION_HEADER]).toBe("1");
    const steps = JSON.parse(init!.body.toString("utf8")) as { body: string }[];
    expect(steps).toHaveLength(1);
    expect(JSON.parse(Buffer.from(steps[0]!.body, "base64").toString("utf8"))).toEqual({ webhookUrl: expect.any(String) });
  }, 180_000);

  it("takes the SDK's re-published init in place of the placeholder until the run has gone on", async () => {
    // Delayed a week (scaled: over an hour), nothing here is delivered while the test looks at the step list.
    const later = { "Upstash-Delay": "7d" };
    const url = `${preV1Endpoint.url}/held`;
    const trigger = await dispatch.api(`/v2/trigger/${url}`, {
      method: "POST",
      headers: { ...later, "Upstash-Workflow-Unknown-Sdk": "true" },
      body: '{"from":"trigger"}',
    });
    const { workflowRunId: runId } = await trigger.json();
    const retrigger = async () => {
      // What the SDK publishes after a probe (§3.4), without the headers it adds for itself.
      const headers = { ...later, "Upstash-Workflow-Init": "true", "Upstash-Workflow-RunId": runId, "upstash-workflow-trigger-by-sdk": "true" };
      const item = { destination: url, headers, body: '{"from":"sdk"}' };
      const response = await dispatch.api("/v2/batch", { method: "POST", body: JSON.stringify([item]) });
      return ((await response.json()) as { messageId: string; deduplicated: boolean }[])[0]!;
    };
    const steps = async () => (await (await dispatch.api(`/v2/workflows/runs/${runId}`)).json()) as { messageId: string; body: string }[];

    const replaced = await retrigger();
    expect(replaced.deduplicated).toBe(false);
    const sdkInit = { messageId: replaced.messageId, body: Buffer.from('{"from":"sdk"}').toString("base64"), callType: "step" };
    expect(await steps()).toEqual([sdkInit]);

    const step = await dispatch.api(`/v2/publish/${url}`, {
      method: "POST",
      headers: { ...later, "Upstash-Workflow-RunId": runId, "Upstash-Workflow-Init": "false" },
      body: JSON.stringify({ stepId: 1, stepName: "s", stepType: "Run", out: "1", concurrent: 1 }),
    });
    expect(step.status).toBe(200);
    expect(await retrigger()).toMatchObject({ messageId: replaced.messageId, deduplicated: true });
    expect((await steps()).map((entry) => entry.messageId)).toEqual([replaced.messageId, (await step.json()).messageId]);
  });

  it("fails the run of an endpoint that is not a v1 SDK, with the probe or without", async () => {
    for (const probe of [true, false]) {
      const runId = await triggerOverRest(`${preV1Endpoint.url}/post`, { data: "test-data" }, probe);
      expect(await endedRun(runId)).toEqual({ state: "RUN_FAILED", groups: 2, error: REST_TRIGGER_NEEDS_V1 });
      const first = preV1Endpoint.requests.find((request) => request.headers["upstash-workflow-runid"] === runId);
      expect(first!.headers["upstash-workflow-unknown-sdk"]).toBe(probe ? "true" : undefined);
    }
  });

  it("probes the runs of a batch trigger whose items ask for it", async () => {
    const item = (probe: boolean) => ({
      destination: `${preV1Endpoint.url}/batch`,
      headers: probe ? { "Upstash-Workflow-Unknown-Sdk": "true" } : {},
      body: "{}",
    });
    const response = await dispatch.api("/v2/batch/trigger", { method: "POST", body: JSON.stringify([item(true), item(false)]) });
    expect(response.status).toBe(201);
    const runIds = ((await response.json()) as { workflowRunId: string }[]).map((run) => run.workflowRunId);
    for (const runId of runIds) expect((await endedRun(runId)).error).toBe(REST_TRIGGER_NEEDS_V1);
    const probeHeader = (runId: string) =>
      preV1Endpoint.requests.find((request) => request.headers["upstash-workflow-runid"] === runId)!.headers["upstash-workflow-unknown-sdk"];
    expect(runIds.map(probeHeader)).toEqual(["true", undefined]);
  });
});
