/**
 * What real workflow apps trip over, each through an unmodified `serve()`
 * app: a call result's headers read by canonical name, webhook events with
 * canonical header names, a parallel group with a failing member as the logs
 * show it, a REST trigger to an endpoint that is not a v1 workflow SDK, a
 * limit the SDK gets as 412 and a large step with the size limit raised.
 */
import type { InvokableWorkflow } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, sleep, startReceiver } from "../support/receiver";
import { startTestService, type TestService } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

let dispatch: TestService;
let app: WorkflowApp;
let thirdParty: Receiver;
const seen = new Map<string, unknown>();

async function waitFor<T>(key: string, timeoutMs = 20_000): Promise<T> {
  for (let waited = 0; !seen.has(key) && waited < timeoutMs; waited += 100) await sleep(100);
  if (!seen.has(key)) throw new Error(`workflow did not report ${key}`);
  return seen.get(key) as T;
}

/** The run's log once it has left RUN_STARTED. */
async function finishedRun(workflowRunId: string): Promise<Record<string, any>> {
  for (let i = 0; i < 200; i++) {
    const { runs } = await app.client.logs({ workflowRunId });
    if (runs[0] && runs[0].workflowState !== "RUN_STARTED") return runs[0];
    await sleep(100);
  }
  throw new Error(`run ${workflowRunId} did not finish`);
}

/** What `context.invoke` needs of a workflow: its id, which names the sibling route (`/child`). */
const child = { routeFunction: async () => undefined, options: {}, workflowId: "child" } as unknown as InvokableWorkflow<unknown, unknown>;

beforeAll(async () => {
  dispatch = await startTestService();
  // A third party answering with lower-case names on the wire, as most servers do.
  thirdParty = await startReceiver(() => ({ status: 200, headers: { "get-header": "got it", "content-type": "text/plain" }, body: "called" }));
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
  await thirdParty.close();
  await dispatch.stop();
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
    for (let i = 0; i < 100 && (await dispatch.service.sql`select 1 from dispatch.workflow_waiters`).length === 0; i++) await sleep(50);
    expect((await fetch(url, { method: "POST", headers: { "x-hook-sender": "me" }, body: "b" })).status).toBe(200);
    expect(await waitFor(`webhook:${workflowRunId}`)).toBe("me");
    // The event as the run's step list holds it: the wait step's `out`, base64 of the request.
    const entries = await dispatch.service.sql<{ body: Buffer }[]>`
      select s.body from dispatch.workflow_steps s join dispatch.workflow_runs r on r.pk = s.run_pk
      where r.run_id = ${workflowRunId} order by s.seq`;
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
    const run = await finishedRun(workflowRunId);
    expect(run.workflowState).toBe("RUN_FAILED");
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
