import { afterAll, beforeAll, expect, it } from "vitest";
import { sleep, startReceiver, type Receiver } from "../support/receiver";
import { startTestService, type TestService } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

let dispatch: TestService;
let app: WorkflowApp;
let third: Receiver;
const done = new Set<string>();

beforeAll(async () => {
  dispatch = await startTestService();
  third = await startReceiver(() => ({ status: 201, headers: { "X-A": "b" }, body: "hello" }));
  app = await startWorkflowApp(dispatch, {
    "/wf": {
      route: async (context) => {
        await context.run("first", () => ({ n: 1 }));
        await Promise.all([context.run("pa", () => "A"), context.run("pb", () => "B")]);
        await context.sleep("nap", 1);
        await context.call("ext", { url: `${third.url}/x`, method: "POST", body: "callbody", headers: { "X-Y": "z" } });
        await context.waitForEvent("w", "evt1", { timeout: "30s" });
        done.add(context.workflowRunId);
        return "fin";
      },
    },
  });
});
afterAll(async () => { await app.close(); await third.close(); await dispatch.stop(); });

it("dumps", async () => {
  const { workflowRunId } = await app.client.trigger({ url: app.url("/wf"), body: { hello: "world" }, label: "lab" });
  for (let i = 0; i < 100 && (await app.client.getWaiters({ eventId: "evt1" })).length === 0; i++) await sleep(100);
  await app.client.notify({ eventId: "evt1", eventData: { x: 1 } });
  for (let i = 0; i < 100 && !done.has(workflowRunId); i++) await sleep(100);
  await sleep(500);
  const rows = await dispatch.service.sql`select s.seq, s.message_id, s.call_type, convert_from(s.body,'utf8') as body, m.state, m.url, m.method, m.headers, m.max_retries, m.callback_headers from dispatch.workflow_steps s left join dispatch.messages m on m.id = s.message_id order by seq`;
  for (const r of rows) console.log(JSON.stringify(r));
  console.log(JSON.stringify(await dispatch.service.sql`select * from dispatch.workflow_runs`));
  expect(done.has(workflowRunId)).toBe(true);
});
