/**
 * What real workflow apps trip over, each through an unmodified `serve()`
 * app: a call result's headers read by canonical name, webhook events with
 * canonical header names, a parallel group with a failing member as the logs
 * show it, a REST trigger to an endpoint that is not a v1 workflow SDK, a
 * limit the SDK gets as 412 and a large step with the size limit raised
 * (this file's Dispatch allows 8 MiB messages).
 */
import type { InvokableWorkflow } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NON_WORKFLOW_DESTINATION, REST_TRIGGER_NEEDS_V1, SDK_HEADER, SDK_VERSION_HEADER } from "../../src/domain/headers/workflow";
import { markStalledRuns } from "../../src/domain/workflows/stalled";
import { poll } from "../support/poll";
import { type Reply, useReceiver } from "../support/receiver";
import { attempts, countMessages, messagesWhere, storedRun, waiterCount, workflowSteps } from "../support/rows";
import { useDispatch } from "../support/service";
import { startWorkflowApp, waitForReport, type WorkflowApp } from "../support/workflow-app";

const MiB = 1024 * 1024;
// Megabyte steps: a worker taken for dead (the fixture's 3 s without a heartbeat, which a loaded CI machine can
// stall past while this process parses the JSON) would have its steps attempted twice.
const dispatch = useDispatch({ maxMessageBytes: 8 * MiB, workerDeadAfterMs: 30_000 });
let app: WorkflowApp;
// A third party answering with lower-case names on the wire, as most servers do; /echo sends the body back.
const thirdParty = useReceiver((request) => ({
  status: 200,
  headers: { "get-header": "got it", "content-type": "text/plain" },
  body: request.path.startsWith("/echo") ? request.body : request.path.startsWith("/huge") ? "h".repeat(9 * MiB) : "called",
}));
/** Answers 200 as the test says: like an SDK older than v1, like a v1 SDK that never goes on, or like no SDK. */
const endpoints = useReceiver((request): Reply => {
  if (request.path.startsWith("/old-sdk")) return { status: 200, headers: { [SDK_VERSION_HEADER]: "1" }, body: "{}" };
  if (request.path.startsWith("/silent-sdk")) return { status: 200, headers: { [SDK_VERSION_HEADER]: "1", [SDK_HEADER]: "v1.3.3" } };
  return { status: 200, body: "a plain web page" };
});
const seen = new Map<string, unknown>();

const waitFor = <T>(key: string, timeoutMs?: number) => waitForReport<T>(seen, key, timeoutMs);

/** The run's log once it has left RUN_STARTED. */
function finishedRun(workflowRunId: string): Promise<Record<string, any>> {
  return poll(async () => {
    const { runs } = await app.client.logs({ workflowRunId });
    return runs[0] && runs[0].workflowState !== "RUN_STARTED" && (runs[0] as Record<string, any>);
  }, `run ${workflowRunId} to finish`);
}

/** What `context.invoke` needs of a workflow: its id, which names the sibling route (`/child`). */
const child = { routeFunction: async () => undefined, options: {}, workflowId: "child" } as unknown as InvokableWorkflow<unknown, unknown>;

beforeAll(async () => {
  const callRoute = (key: string) => async (context: Parameters<Parameters<typeof startWorkflowApp>[1][string]["route"]>[0]) => {
    const { header, body } = await context.call("call", { url: `${thirdParty.url}/call`, method: "GET" });
    seen.set(`${key}:${context.workflowRunId}`, { getHeader: header["Get-Header"]?.[0], contentType: header["Content-Type"]?.[0], body });
  };
  app = await startWorkflowApp(dispatch, {
    "/call": { route: callRoute("call") },
    "/call-failure-function": { route: callRoute("call-ff"), options: { failureFunction: async () => "handled" } },
    "/call-failure-url": { route: callRoute("call-fu") },
    "/parallel-failing": {
      route: async (context) => {
        await Promise.all([
          context.invoke("delegate", { workflow: child, body: { n: 2 } }),
          context.run("explode", () => {
            throw new Error("exploded on purpose");
          }),
        ]);
      },
    },
    "/over-limit": {
      route: async (context) => {
        await context.run("before", () => 1);
        // DISPATCH_MAX_RETRIES is 20: publishing this call answers 412.
        await context.call("call", { url: `${thirdParty.url}/call`, method: "GET", retries: 50 });
      },
    },
    "/large": {
      route: async (context) => {
        const big = await context.run("make", () => "x".repeat(5 * MiB));
        const length = await context.run("measure", () => big.length);
        // Over the default 1 MiB limit both ways; smaller than the step, to keep the test short.
        const reply = await context.call("echo", { url: `${thirdParty.url}/echo`, method: "POST", body: big.slice(0, 2 * MiB) });
        seen.set(`large:${context.workflowRunId}`, { length, echoed: (reply.body as string).length });
      },
    },
    "/huge-call": {
      route: async (context) => {
        const { status, body } = await context.call("huge", { url: `${thirdParty.url}/huge`, method: "GET" });
        seen.set(`huge:${context.workflowRunId}`, { status, length: String(body ?? "").length });
      },
    },
    "/sleeping": { route: async (context) => context.sleep("long", 3600) },
    "/waiting": { route: async (context) => void (await context.waitForEvent("wait", `never-${context.workflowRunId}`, { timeout: "1h" })) },
    "/child": { route: async (context) => context.run("double", () => (context.requestPayload as { n: number }).n * 2) },
    "/webhook": {
      route: async (context) => {
        const webhook = await context.createWebhook("hook");
        seen.set(`webhook-url:${context.workflowRunId}`, webhook.webhookUrl);
        const { request } = await context.waitForWebhook("wait-hook", webhook, "10s");
        seen.set(`webhook:${context.workflowRunId}`, request?.headers.get("x-hook-sender"));
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

describe("header names", () => {
  it.each([
    ["/call", "call", {}],
    ["/call-failure-function", "call-ff", {}],
    ["/call-failure-url", "call-fu", { failureUrl: "http://127.0.0.1:9/unused" }],
  ])("a call result's headers are read by canonical name (%s)", async (path, key, options) => {
    const { workflowRunId } = await app.client.trigger({ url: app.url(path), ...options });
    expect(await waitFor(`${key}:${workflowRunId}`)).toEqual({ getHeader: "got it", contentType: "text/plain", body: "called" });
    const run = await finishedRun(workflowRunId);
    expect(run.workflowState).toBe("RUN_SUCCESS");
    const call = run.steps.flatMap((group: { steps: Record<string, any>[] }) => group.steps).find((step: Record<string, any>) => step.stepType === "Call");
    expect(call.callResponseHeaders).toMatchObject({ "Get-Header": ["got it"] });
  });

  it("a webhook event carries the caller's headers, canonical names", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/webhook") });
    const url = await waitFor<string>(`webhook-url:${workflowRunId}`);
    await poll(async () => (await waiterCount(dispatch)) > 0, "the wait");
    expect((await fetch(url, { method: "POST", headers: { "x-hook-sender": "me" }, body: "b" })).status).toBe(200);
    expect(await waitFor(`webhook:${workflowRunId}`)).toBe("me");
    // The event as the run's step list holds it: the wait step's `out`, base64 of the request.
    const entries = await workflowSteps(dispatch, workflowRunId);
    const steps = entries.flatMap((entry) => {
      try {
        return [JSON.parse(entry.body.toString())];
      } catch {
        return []; // the initial payload
      }
    });
    const waits = steps.filter((step) => step?.waitEventId);
    const event = JSON.parse(Buffer.from(waits.at(-1).out, "base64").toString());
    expect(event.header["X-Hook-Sender"]).toEqual(["me"]);
  });
});

describe("the run logs", () => {
  it("show a parallel group with its failed member: the child succeeded, the other failed, in planned order", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/parallel-failing"), retries: 0 });
    let run = await finishedRun(workflowRunId);
    expect(run.workflowState).toBe("RUN_FAILED");
    // The run may fail before the child finishes: the child's result joins the ended run when it comes.
    const complete = (r: Record<string, any>) => r.steps.some((g: { type: string; steps: unknown[] }) => g.type === "parallel" && g.steps.length === 2);
    run = await poll(async () => {
      const latest = await finishedRun(workflowRunId);
      return complete(latest) && latest;
    }, "the child's result in the group");
    const parallel = run.steps.filter((group: { type: string }) => group.type === "parallel");
    expect(parallel, JSON.stringify(run.steps)).toHaveLength(1);
    expect(parallel[0].steps).toEqual([
      expect.objectContaining({ stepName: "delegate", stepType: "Invoke", state: "STEP_SUCCESS", concurrent: 2 }),
      expect.objectContaining({ stepName: "explode", stepType: "Run", state: "STEP_FAILED", concurrent: 2 }),
    ]);
    expect(parallel[0].steps[1].errors?.[0]?.error ?? "").toBeTruthy();
    const next = run.steps.find((group: { type: string }) => group.type === "next");
    const failedElsewhere = (next?.steps ?? []).filter((step: { messageId: string }) => step.messageId === parallel[0].steps[1].messageId);
    expect(failedElsewhere).toEqual([]);
  });
});

/** The run's state and the error its failed message was logged with, once it has left RUN_STARTED. */
async function failure(workflowRunId: string): Promise<{ state: string; error: string | undefined }> {
  const run = await poll(async () => {
    const row = await storedRun(dispatch, workflowRunId);
    return row && row.state !== "RUN_STARTED" && row;
  }, `run ${workflowRunId} to end`);
  const [message] = await messagesWhere(dispatch, { workflowRunPk: run.pk });
  const { logs } = await (await dispatch.api(`/v2/logs?messageId=${message!.id}`)).json();
  return { state: run.state, error: logs.find((log: { state: string }) => log.state === "FAILED")?.error };
}

describe("starting a run on an endpoint that cannot run it", () => {
  it("a REST trigger answered by an SDK older than v1 fails the run", async () => {
    const response = await dispatch.api(`/v2/trigger/${endpoints.url}/old-sdk`, { method: "POST", body: "{}" });
    expect(response.status).toBe(200);
    expect(await failure((await response.json()).workflowRunId)).toEqual({ state: "RUN_FAILED", error: REST_TRIGGER_NEEDS_V1 });
  });

  it("a trigger answered by something that is no workflow SDK at all fails the run (REST and SDK)", async () => {
    const rest = await dispatch.api(`/v2/trigger/${endpoints.url}/plain`, { method: "POST", body: "{}" });
    expect(await failure((await rest.json()).workflowRunId)).toEqual({ state: "RUN_FAILED", error: NON_WORKFLOW_DESTINATION });
    const { workflowRunId } = await app.client.trigger({ url: `${endpoints.url}/plain-sdk` });
    expect(await failure(workflowRunId)).toEqual({ state: "RUN_FAILED", error: NON_WORKFLOW_DESTINATION });
  });

  it("a run left started with nothing scheduled is found and reported once; sleeping and waiting runs are not", async () => {
    const silent = await dispatch.api(`/v2/trigger/${endpoints.url}/silent-sdk`, { method: "POST", body: "{}" });
    const stalledId = (await silent.json()).workflowRunId;
    const { workflowRunId: sleepingId } = await app.client.trigger({ url: app.url("/sleeping") });
    const { workflowRunId: waitingId } = await app.client.trigger({ url: app.url("/waiting") });
    const sql = dispatch.service.sql;
    // Until each has done its first step: the silent one's init delivered, the others sleeping or waiting.
    await poll(async () => {
      const delivered = await countMessages(dispatch, { workflowRunIds: [stalledId, sleepingId], states: ["DELIVERED"] });
      return (await waiterCount(dispatch)) + delivered >= 3;
    }, "each run's first step");
    const found = await markStalledRuns(sql, 0);
    expect(found.map((run) => run.runId)).toContain(stalledId);
    expect(found.map((run) => run.runId)).not.toContain(sleepingId);
    expect(found.map((run) => run.runId)).not.toContain(waitingId);
    expect((await markStalledRuns(sql, 0)).map((run) => run.runId)).not.toContain(stalledId);
    const row = await storedRun(dispatch, stalledId);
    expect(row!.stalledAt).toBeInstanceOf(Date);
  });
});

describe("limits", () => {
  it("a step over a limit gets 412, which the SDK turns into a failed run without retrying", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/over-limit"), retries: 3 });
    const run = await finishedRun(workflowRunId);
    expect(run.workflowState).toBe("RUN_FAILED");
    const failed = (await messagesWhere(dispatch, { workflowRunIds: [workflowRunId], states: ["FAILED"] })).map(
      ({ retried, maxRetries }) => ({ retried, maxRetries }),
    );
    expect(failed).toEqual([{ retried: 0, maxRetries: 3 }]);
  });

  it("a 5 MiB step result and a 2 MiB call go through with the limit raised", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/large") });
    expect(await waitFor(`large:${workflowRunId}`, 150_000)).toEqual({ length: 5 * MiB, echoed: 2 * MiB });
    expect((await finishedRun(workflowRunId)).workflowState).toBe("RUN_SUCCESS");
    // Several 5 MiB steps through Postgres, each step list decoded by the SDK in JavaScript, take long on a loaded
    // 2-core machine (44 s on a slow one, 2026-11-29): up to the wait above.
  }, 180_000);

  it("a call whose response is over the limit fails, saying so, instead of handing on a cut-off body", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/huge-call") });
    expect(await waitFor(`huge:${workflowRunId}`, 30_000)).toEqual({ status: 0, length: 0 });
    const calls = await messagesWhere(dispatch, { workflowRunIds: [workflowRunId], workflowCallType: "toCallback" });
    const [call] = await attempts(dispatch, calls.map((message) => message.id));
    expect(call!.error).toMatch(/response body exceeds the maximum message size of 8388608 bytes \(raise it with DISPATCH_MAX_MESSAGE_SIZE\)/);
  }, 60_000);
});
