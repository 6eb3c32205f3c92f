/**
 * Every step type of the official workflow SDK, run through Dispatch by an
 * unmodified `serve()` handler with signature verification on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { countMessages, storedRun, waiterCount } from "../support/rows";
import { useDispatch } from "../support/service";
import { startWorkflowApp, waitForReport, type WorkflowApp } from "../support/workflow-app";

/** Workflow sleeps are scaled (DISPATCH_DELAY_SCALE): a 60 s sleep waits 600 ms. */
const DELAY_SCALE = 0.01;
const dispatch = useDispatch({ delayScale: DELAY_SCALE });
let app: WorkflowApp;
const thirdParty = useReceiver((request) => ({
  status: request.path.startsWith("/fail") ? 500 : 200,
  headers: { "Content-Type": "application/json", "X-Third": "yes" },
  body: JSON.stringify({ echoed: request.body.toString() }),
}));
const seen = new Map<string, unknown>();

const waitFor = <T>(key: string, timeoutMs?: number) => waitForReport<T>(seen, key, timeoutMs);

/** The run's state once it has left RUN_STARTED. */
const runState = (runId: string) =>
  poll(async () => {
    const run = await storedRun(dispatch, runId);
    return run && run.state !== "RUN_STARTED" && run.state;
  }, `run ${runId} to end`, 5_000);

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/parallel": {
      route: async (context) => {
        const [a, b, c] = await Promise.all([
          context.run("a", () => "A"),
          context.run("b", () => "B"),
          context.sleep("pause", 1).then(() => "C"),
        ]);
        seen.set(`parallel:${context.workflowRunId}`, [a, b, c]);
      },
    },
    "/sleep-until-and-notify": {
      route: async (context) => {
        const startedAt = await context.run("clock", () => Date.now());
        const until = Math.ceil(startedAt / 1000) + 60;
        await context.sleepUntil("until", until);
        const { notifyResponse } = await context.notify("tell", `evt-notify-${context.requestPayload}`, { from: "workflow" });
        const slept = Date.now() - startedAt >= (until * 1000 - startedAt) * DELAY_SCALE - 20;
        seen.set(`notify:${context.workflowRunId}`, { slept, notified: notifyResponse.length });
      },
    },
    "/notified": {
      route: async (context) => {
        const { eventData } = await context.waitForEvent("wait", `evt-notify-${context.requestPayload}`, { timeout: "10s" });
        seen.set(`notified:${context.requestPayload}`, eventData);
      },
    },
    "/call": {
      route: async (context) => {
        const ok = await context.call("ok", { url: `${thirdParty.url}/ok`, method: "POST", body: JSON.stringify({ x: 1 }) });
        const bad = await context.call("bad", { url: `${thirdParty.url}/fail`, method: "POST", retries: 1 });
        seen.set(`call:${context.workflowRunId}`, { ok, bad: bad.status });
      },
    },
    "/wait": {
      route: async (context) => {
        const { eventData, timeout } = await context.waitForEvent("wait", `evt-${context.requestPayload}`, { timeout: "10s" });
        seen.set(`wait:${context.workflowRunId}`, { eventData, timeout });
      },
    },
    "/wait-short": {
      route: async (context) => {
        const result = await context.waitForEvent("wait", "never-notified", { timeout: "1s" });
        seen.set(`timeout:${context.workflowRunId}`, result);
      },
    },
    "/child": {
      route: async (context) => {
        const value = await context.run("double", () => (context.requestPayload as { n: number }).n * 2);
        return { doubled: value };
      },
    },
    "/failing": {
      route: async (context) => {
        await context.run("boom", () => {
          throw new Error("step exploded");
        });
      },
      options: {
        failureFunction: async ({ context, failStatus, failResponse }) => {
          seen.set(`failure:${context.workflowRunId}`, { failStatus, failResponse, payload: context.requestPayload });
          return "handled";
        },
      },
    },
    "/cancel": {
      route: async (context) => {
        await context.run("before", () => 1);
        await context.cancel();
        await context.run("after", () => seen.set("cancel:after", true));
      },
    },
    "/webhook": {
      route: async (context) => {
        const webhook = await context.createWebhook("hook");
        seen.set(`webhook-url:${context.workflowRunId}`, webhook.webhookUrl);
        const { request, timeout } = await context.waitForWebhook("wait-hook", webhook, "10s");
        seen.set(`webhook:${context.workflowRunId}`, { timeout, body: await request?.text(), method: request?.method });
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

describe("workflow steps", () => {
  it("runs parallel steps, including a sleep branch", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/parallel") });
    expect(await waitFor(`parallel:${workflowRunId}`)).toEqual(["A", "B", "C"]);
    expect(await runState(workflowRunId)).toBe("RUN_SUCCESS");
  });

  it("sleeps until a time and notifies another run's waiter from inside a workflow", async () => {
    const key = `k${Date.now()}`;
    await app.client.trigger({ url: app.url("/notified"), body: key });
    await poll(async () => (await app.client.getWaiters({ eventId: `evt-notify-${key}` })).length > 0, "the waiter");
    const { workflowRunId } = await app.client.trigger({ url: app.url("/sleep-until-and-notify"), body: key });
    expect(await waitFor(`notify:${workflowRunId}`)).toEqual({ slept: true, notified: 1 });
    expect(await waitFor(`notified:${key}`)).toEqual({ from: "workflow" });
  });

  it("makes third-party calls and gets their final response, failed or not", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/call") });
    const result = await waitFor<{ ok: { status: number; body: unknown; header: Record<string, string[]> }; bad: number }>(
      `call:${workflowRunId}`,
    );
    expect(result.ok.status).toBe(200);
    expect(result.ok.body).toEqual({ echoed: '{"x":1}' });
    expect(result.bad).toBe(500);
    expect(thirdParty.requests.filter((r) => r.path === "/fail")).toHaveLength(2);
    expect(await runState(workflowRunId)).toBe("RUN_SUCCESS");
  });

  it("resumes a waiting run on notify, and delivers to a notify that came first (lookback)", async () => {
    const first = await app.client.trigger({ url: app.url("/wait"), body: "one" });
    await poll(async () => (await app.client.getWaiters({ eventId: "evt-one" })).length > 0, "the waiter");
    const notified = await app.client.notify({ eventId: "evt-one", eventData: { hello: 1 } });
    expect(notified).toHaveLength(1);
    expect(await waitFor(`wait:${first.workflowRunId}`)).toEqual({ eventData: { hello: 1 }, timeout: false });
  });

  it("times a wait out", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/wait-short") });
    expect(await waitFor(`timeout:${workflowRunId}`)).toEqual({ eventData: undefined, timeout: true });
  });

  it("calls the failure function with the failure once retries are exhausted", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/failing"), body: { order: 9 }, retries: 1 });
    const failure = await waitFor<{ failStatus: number; failResponse: string; payload: unknown }>(`failure:${workflowRunId}`);
    expect(failure.failStatus).toBe(500);
    expect(failure.failResponse).toContain("step exploded");
    expect(failure.payload).toEqual({ order: 9 });
    expect(await runState(workflowRunId)).toBe("RUN_FAILED");
    const run = await poll(async () => {
      const row = await storedRun(dispatch, workflowRunId);
      return row?.failureCallbackState === "CALLBACK_SUCCESS" && row;
    }, "the failure function's outcome");
    expect(run).toMatchObject({ failureCallbackState: "CALLBACK_SUCCESS", dlqId: expect.stringMatching(/^dlq_/) });
  });

  it("cancels a run from inside", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/cancel") });
    expect(await runState(workflowRunId)).toBe("RUN_CANCELED");
    // Nothing of the run is pending any more, so nothing can run its later steps.
    await poll(async () => {
      const pending = await countMessages(dispatch, { workflowRunIds: [workflowRunId], states: ["CREATED", "RETRY"] });
      return pending === 0;
    }, "the run's messages to finish");
    expect(seen.has("cancel:after")).toBe(false);
  });

  it("creates a webhook and resumes when it is called", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/webhook") });
    const url = await waitFor<string>(`webhook-url:${workflowRunId}`);
    await poll(async () => (await waiterCount(dispatch)) > 0, "the wait");
    const response = await fetch(url, { method: "POST", body: "hook body" });
    expect(response.ok).toBe(true);
    expect(await waitFor(`webhook:${workflowRunId}`)).toEqual({ timeout: false, body: "hook body", method: "POST" });
  });
});
