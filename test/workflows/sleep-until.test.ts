/**
 * `context.sleepUntil` never wakes early (docs/workflow-protocol.md §5): the
 * SDK rounds the time to whole seconds (`toFixed(0)`), so a run's message with
 * `Not-Before: N` waits until N + 0.5 s, the latest instant that rounds to N;
 * a plain publish's `Not-Before: N` still means the start of second N. Real
 * time: this file's service does not scale delays.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp, waitForReport } from "../support/workflow-app";

const dispatch = useDispatch();
let app: WorkflowApp;
const receiver = useReceiver();
const reports = new Map<string, unknown>();

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/until": {
      route: async (context) => {
        // A time 0.2 s into a second, which toFixed(0) rounds down: the header names a time 0.2 s early.
        const target = await context.run("target", () => Math.floor(Date.now() / 1000) + 2.2);
        await context.sleepUntil("until", target);
        const woke = await context.run("woke", () => Date.now());
        reports.set(context.workflowRunId, { target, woke });
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

/** The stored `notBefore` (Unix ms) of message `id`. */
const notBeforeOf = async (id: string): Promise<number> => (await (await dispatch.api(`/v2/messages/${id}`)).json()).notBefore;

describe("a workflow's Not-Before", () => {
  it("wakes a sleepUntil step no earlier than the time it asked for", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/until") });
    const { target, woke } = await waitForReport<{ target: number; woke: number }>(reports, workflowRunId, 15_000);
    expect(woke).toBeGreaterThanOrEqual(target * 1000);
    expect(woke).toBeLessThan(target * 1000 + 1500);

    const [run] = (await app.client.logs({ filter: { workflowRunId } })).runs;
    const steps = run!.steps.flatMap((group) => group.steps as { stepType?: string; messageId: string }[]);
    const sleep = steps.find((step) => step.stepType === "SleepUntil")!;
    expect(await notBeforeOf(sleep.messageId)).toBe(Math.round(target) * 1000 + 500);
  });

  it("holds a trigger's notBefore to the end of its second too", async () => {
    const second = Math.floor(Date.now() / 1000) + 3600;
    const { workflowRunId } = await app.client.trigger({ url: app.url("/until"), notBefore: second });
    const [run] = (await app.client.logs({ filter: { workflowRunId } })).runs;
    expect(await notBeforeOf(run!.steps[0]!.steps[0]!.messageId)).toBe(second * 1000 + 500);
    await app.client.cancel({ ids: workflowRunId });
  });

  it("leaves a plain publish's Not-Before at the start of its second", async () => {
    const second = Math.floor(Date.now() / 1000) + 1;
    const published = await dispatch.api(`/v2/publish/${receiver.url}/plain`, {
      method: "POST",
      headers: { "Upstash-Not-Before": String(second) },
      body: "x",
    });
    const { messageId } = await published.json();
    expect(await notBeforeOf(messageId)).toBe(second * 1000);
    const [request] = await receiver.waitFor(1);
    expect(request!.at).toBeGreaterThanOrEqual(second * 1000);
  });
});
