/**
 * A workflow run is one trace: the run is started with the caller's
 * `traceparent`, and every step's attempt is a child span in that trace,
 * though each step is published by the workflow SDK's own request (which
 * carries no trace context: the app here is not instrumented).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { storedRun } from "../support/rows";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const collector = useReceiver();
const dispatch = useDispatch(() => ({
  delayScale: 0.01,
  tracing: {
    endpoint: `${collector.url}/v1/traces`,
    protocol: "http/json",
    headers: {},
    resource: { "service.name": "dispatch" },
    sampler: "parentbased_always_on",
    ratio: 1,
    exportDelayMs: 50,
  },
}));
let app: WorkflowApp;

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/wf": {
      route: async (context) => {
        const a = await context.run("first", () => 1);
        const b = await context.run("second", () => a + 1);
        await context.sleep("nap", 1);
        return b;
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

const TRACE = "5b8aa5a2d2c872e8321cf37308d69df2";
const CALLER_SPAN = "051581bf3cb55c13";

/** The names and parents of the spans exported in `trace`. */
function spansIn(trace: string): { name: string; parent: string | undefined }[] {
  return collector.requests.flatMap((request) =>
    (JSON.parse(request.body.toString()).resourceSpans as { scopeSpans: { spans: { traceId: string; name: string; parentSpanId?: string }[] }[] }[])
      .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
      .filter((span) => span.traceId === trace)
      .map((span) => ({ name: span.name, parent: span.parentSpanId })),
  );
}

it("puts every step's attempt of a run in the trace that started it", async () => {
  const triggered = await dispatch.api(`/v2/trigger/${app.url("/wf")}`, {
    method: "POST",
    headers: { traceparent: `00-${TRACE}-${CALLER_SPAN}-01` },
    body: "{}",
  });
  expect(triggered.status).toBe(200);
  const { workflowRunId } = await triggered.json();
  await poll(async () => (await storedRun(dispatch, workflowRunId))?.state === "RUN_SUCCESS", "the run to succeed");
  // The init, both steps, the sleep and the last call: at least four attempts, every one under the caller's span.
  const steps = () => spansIn(TRACE).filter((span) => span.name === "workflow step");
  await poll(() => steps().length >= 4, () => `the steps' spans (${steps().length} so far)`);
  expect(steps().every((span) => span.parent === CALLER_SPAN)).toBe(true);
});
