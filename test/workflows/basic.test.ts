import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { storedRun, storedRuns } from "../support/rows";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

/** Workflow sleeps are scaled (DISPATCH_DELAY_SCALE): a 1 s sleep waits 10 ms; the logs keep 1 s. */
const dispatch = useDispatch({ delayScale: 0.01 });
let app: WorkflowApp;
const results: unknown[] = [];

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/wf": {
      route: async (context) => {
        const a = await context.run("first", () => ({ n: 1 }));
        const b = await context.run("second", () => a.n + 1);
        await context.sleep("nap", 1);
        results.push({ payload: context.requestPayload, b });
        return { done: b };
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

it("runs a workflow with run and sleep steps", async () => {
  const { workflowRunId } = await app.client.trigger({ url: app.url("/wf"), body: { hello: "world" } });
  await poll(() => results.length > 0, "the workflow's result");
  expect(results).toEqual([{ payload: { hello: "world" }, b: 2 }]);
  const run = await poll(async () => {
    const row = await storedRun(dispatch, workflowRunId);
    return row?.state !== "RUN_STARTED" && row;
  }, "the run to end");
  expect(run).toMatchObject({ state: "RUN_SUCCESS", response: '{"done":2}' });
});

it("deduplicates a trigger for an active run id and refuses steps for unknown or ended runs", async () => {
  const publishStep = (runId: string) =>
    dispatch.api(`/v2/publish/${app.url("/wf")}`, {
      method: "POST",
      headers: { "Upstash-Workflow-RunId": runId, "Upstash-Workflow-Init": "false", "Upstash-Method": "POST" },
      body: "[]",
    });
  const unknown = await publishStep("wfr_never-started");
  expect(unknown.status).toBe(400);
  expect((await unknown.json()).error).toMatch(/does not exist or has already ended/);

  const init = (runId: string) =>
    dispatch.api("/v2/batch", {
      method: "POST",
      body: JSON.stringify([
        {
          destination: app.url("/wf"),
          headers: { "Upstash-Workflow-Init": "true", "Upstash-Workflow-RunId": runId, "Upstash-Delay": "1h" },
          body: "{}",
        },
      ]),
    });
  const [first] = await (await init("wfr_twice")).json();
  const [second] = await (await init("wfr_twice")).json();
  expect(first.deduplicated).toBe(false);
  expect(second).toMatchObject({ messageId: first.messageId, deduplicated: true });
  const runs = await storedRuns(dispatch, { runIds: ["wfr_twice"] });
  expect(runs.length).toBe(1);

  await dispatch.api("/v2/workflows/runs/wfr_twice?cancel=true", { method: "DELETE" });
  expect((await publishStep("wfr_twice")).status).toBe(400);
});
