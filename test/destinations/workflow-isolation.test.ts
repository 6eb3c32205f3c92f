/**
 * Workflow steps go through the same fair slots as every message: the steps
 * of runs whose workflow server hangs hold that server's share of the slots,
 * and another server's workflow runs its steps as if alone.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { attemptsOf, messagesWhere } from "../support/rows";
import { type Receiver, startReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

/** 32 slots a worker, 8 of them one destination's share (DISPATCH_DESTINATION_SHARE's default, 0.25). */
const dispatch = useDispatch({ workerConcurrency: 32 });
let hanging: Receiver;
let app: WorkflowApp;
const finished = new Map<string, number>();

beforeAll(async () => {
  hanging = await startReceiver(() => new Promise(() => {}));
  app = await startWorkflowApp(dispatch, {
    "/healthy": {
      route: async (context) => {
        const first = await context.run("first", () => 1);
        const second = await context.run("second", () => first + 1);
        const third = await context.run("third", () => second + 1);
        finished.set(context.workflowRunId, Date.now());
        return third;
      },
    },
  });
});
afterAll(async () => {
  await hanging.close();
  await app.close();
});

it("a workflow server that hangs holds its share; another server's run takes its three steps at once", async () => {
  const items = Array.from({ length: 200 }, () => ({ destination: `${hanging.url}/stuck`, body: "{}" }));
  const triggered = await dispatch.api("/v2/batch/trigger", { method: "POST", body: JSON.stringify(items) });
  expect(triggered.status).toBe(201);
  await poll(() => hanging.requests.length >= 8, "the hanging server to hold its share of the slots");

  const { workflowRunId } = await app.client.trigger({ url: app.url("/healthy"), body: {} });
  await poll(() => finished.get(workflowRunId), "the healthy run's three steps");
  // No slot came free on the way: the hanging attempts end only at their 15-minute timeout, and none has been recorded.
  expect(hanging.requests).toHaveLength(8);
  const stuck = await messagesWhere(dispatch, { url: `${hanging.url}/stuck` });
  expect(stuck).toHaveLength(200);
  expect(await attemptsOf(dispatch, stuck.map((message) => message.id))).toBe(0);
});
