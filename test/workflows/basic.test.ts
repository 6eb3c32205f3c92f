import { afterAll, beforeAll, expect, it } from "vitest";
import { sleep } from "../support/receiver";
import { startTestService, type TestService } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

let dispatch: TestService;
let app: WorkflowApp;
const results: unknown[] = [];

beforeAll(async () => {
  dispatch = await startTestService();
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
  await dispatch.stop();
});

it("runs a workflow with run and sleep steps", async () => {
  const { workflowRunId } = await app.client.trigger({ url: app.url("/wf"), body: { hello: "world" } });
  for (let i = 0; i < 100 && results.length === 0; i++) await sleep(100);
  console.log(JSON.stringify(await dispatch.service.sql`select state, run_id from dispatch.workflow_runs`));
  console.log(JSON.stringify(await dispatch.service.sql`select m.id, m.state, m.workflow_call_type, e.state as ev, e.error, e.response_status, convert_from(e.response_body, 'utf8') as rb from dispatch.messages m join dispatch.message_events e on e.message_id = m.id order by e.id`));
  expect(results).toEqual([{ payload: { hello: "world" }, b: 2 }]);
  await sleep(500);
  const [run] = await dispatch.service.sql`select state, response from dispatch.workflow_runs where run_id = ${workflowRunId}`;
  expect(run).toMatchObject({ state: "RUN_SUCCESS", response: '{"done":2}' });
});
