/**
 * `POST /v2/batch/trigger` (docs/hosted-api.md §13.1): several runs of real
 * `serve()` workflows started in one request, with the body the hosted
 * description gives (`[{destination, body?, headers?}]`, the headers those of
 * the single trigger). The official client's `trigger([...])` publishes
 * through `/v2/batch` instead; both start the same runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { storedRun, storedRuns } from "../support/rows";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
let app: WorkflowApp;
/** What each run saw, by run id. */
const seen = new Map<string, { payload: unknown; trace: string | null; label: string | undefined }>();

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/greet": {
      route: async (context) => {
        const greeting = await context.run("greet", () => `hello ${JSON.stringify(context.requestPayload)}`);
        seen.set(context.workflowRunId, { payload: context.requestPayload, trace: context.headers.get("x-trace"), label: context.label });
        return greeting;
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

const batchTrigger = (items: unknown) => dispatch.api("/v2/batch/trigger", { method: "POST", body: JSON.stringify(items) });

/** The state of each run, once every one has ended. */
async function endStates(runIds: string[]): Promise<string[]> {
  return poll(async () => {
    const rows = await storedRuns(dispatch, { runIds });
    const states = runIds.map((id) => rows.find((row) => row.runId === id)?.state);
    return states.every((state) => state !== undefined && state !== "RUN_STARTED") && (states as string[]);
  }, `${runIds.join(", ")} to end`);
}

describe("POST /v2/batch/trigger", () => {
  it("starts a run per item, with its id, input, forwarded headers and label, answering 201", async () => {
    const response = await batchTrigger([
      {
        destination: app.url("/greet"),
        body: '{"name":"ada"}',
        headers: { "Content-Type": "application/json", "Upstash-Workflow-RunId": "wfr_batch-ada", "Upstash-Forward-X-Trace": "t-1", "Upstash-Label": "batch" },
      },
      { destination: app.url("/greet"), body: "plain text", headers: { "Upstash-Retries": "0" } },
      { destination: app.url("/greet") },
    ]);
    expect(response.status).toBe(201);
    const runs = await response.json();
    expect(runs).toEqual([
      { workflowRunId: "wfr_batch-ada", workflowCreatedAt: expect.any(Number), deduplicated: false },
      { workflowRunId: expect.stringMatching(/^wfr_/), workflowCreatedAt: expect.any(Number), deduplicated: false },
      { workflowRunId: expect.stringMatching(/^wfr_/), workflowCreatedAt: expect.any(Number), deduplicated: false },
    ]);
    const ids = runs.map((run: { workflowRunId: string }) => run.workflowRunId);
    expect(new Set(ids).size).toBe(3);
    expect(await endStates(ids)).toEqual(["RUN_SUCCESS", "RUN_SUCCESS", "RUN_SUCCESS"]);
    expect(seen.get("wfr_batch-ada")).toEqual({ payload: { name: "ada" }, trace: "t-1", label: "batch" });
    expect(seen.get(ids[1])).toMatchObject({ payload: "plain text", trace: null });
    expect(seen.get(ids[2])).toMatchObject({ payload: undefined });

    const { runs: logged } = await app.client.logs({ filter: { workflowRunId: "wfr_batch-ada" } });
    expect(logged[0]).toMatchObject({ workflowRunCreatedAt: runs[0].workflowCreatedAt, labels: ["batch"] });
    const config = await storedRun(dispatch, ids[1]);
    expect(config!.config).toMatchObject({ maxRetries: 0 });
  });

  it("answers a run id given twice with one run, the second deduplicated", async () => {
    const item = { destination: app.url("/greet"), body: "1", headers: { "Upstash-Workflow-RunId": "wfr_batch-twice", "Upstash-Delay": "1h" } };
    const runs = await (await batchTrigger([item, item])).json();
    expect(runs).toEqual([
      { workflowRunId: "wfr_batch-twice", workflowCreatedAt: expect.any(Number), deduplicated: false },
      { workflowRunId: "wfr_batch-twice", workflowCreatedAt: runs[0].workflowCreatedAt, deduplicated: true },
    ]);
    const again = await (await batchTrigger([item])).json();
    expect(again).toEqual([{ workflowRunId: "wfr_batch-twice", workflowCreatedAt: runs[0].workflowCreatedAt, deduplicated: true }]);
    await app.client.cancel({ ids: "wfr_batch-twice" });
  });

  it("starts the same runs as the client's trigger([...]), which publishes through /v2/batch", async () => {
    const [fromClient] = await app.client.trigger([{ url: app.url("/greet"), body: { name: "sdk" }, headers: { "X-Trace": "t-2" } }]);
    const [fromRest] = await (
      await batchTrigger([{ destination: app.url("/greet"), body: '{"name":"sdk"}', headers: { "Upstash-Forward-X-Trace": "t-2" } }])
    ).json();
    await endStates([fromClient!.workflowRunId, fromRest.workflowRunId]);
    expect(seen.get(fromRest.workflowRunId)).toEqual(seen.get(fromClient!.workflowRunId));
  });

  it("starts nothing when an item is refused, and refuses more than 1000 items", async () => {
    const before = (await storedRuns(dispatch)).length;
    const refused = await batchTrigger([
      { destination: app.url("/greet"), headers: { "Upstash-Workflow-RunId": "wfr_batch-never" } },
      { destination: "not-a-url" },
    ]);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatch(/invalid workflow url "not-a-url"/);
    const after = (await storedRuns(dispatch)).length;
    expect(after).toBe(before);

    const tooMany = await batchTrigger(Array.from({ length: 1001 }, () => ({ destination: app.url("/greet") })));
    expect(tooMany.status).toBe(412);
    for (const body of [{ destination: app.url("/greet") }, [], [{ body: "no destination" }]]) {
      expect((await batchTrigger(body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});
