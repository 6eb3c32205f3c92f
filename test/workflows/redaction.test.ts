/**
 * Redaction in workflows: a run triggered with the official SDK's `redact`
 * option hides its data in the run logs (initial payload, step results, the
 * call's bodies and headers, the run's result), in the message logs of every
 * message of the run and in the workflow DLQ, while the workflow itself runs
 * on the originals.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectHidden, REDACTED } from "../support/hidden";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
let app: WorkflowApp;
const thirdParty = useReceiver(() => ({ status: 200, body: "reply-secret" }));
/** What the workflow read: its payload and the secret header. */
const seen: unknown[] = [];

const SECRETS = ["payload-secret", "header-secret", "derived-secret", "call-secret", "reply-secret"];

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/secret": {
      route: async (context) => {
        seen.push(context.requestPayload, context.headers.get("x-secret"));
        const derived = await context.run("derive", () => `${(context.requestPayload as { secret: string }).secret}-derived-secret`);
        const reply = await context.call("call", {
          url: `${thirdParty.url}/call`,
          method: "POST",
          body: "call-secret",
          headers: { "X-Secret": "header-secret" },
        });
        return `${derived} ${reply.body}`;
      },
    },
    "/secret-fail": {
      route: async (context) => {
        await context.run("boom", () => {
          throw new Error("boom");
        });
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

const expectSecretsHidden = (value: unknown) => expectHidden(value, ...SECRETS);

function runLog(workflowRunId: string, state: string) {
  return poll(async () => {
    const { runs } = await app.client.logs({ workflowRunId });
    return runs[0]?.workflowState === state && runs[0];
  }, `run ${workflowRunId} to reach ${state}`);
}

describe("a run triggered with redact", () => {
  it("runs on the originals and logs them hidden: run logs, message logs", async () => {
    const { workflowRunId } = await app.client.trigger({
      url: app.url("/secret"),
      body: { secret: "payload-secret" },
      headers: { "X-Secret": "header-secret" },
      redact: { body: true, header: ["X-Secret"] },
    });
    const run = (await runLog(workflowRunId, "RUN_SUCCESS")) as unknown as Record<string, any>;
    expect(seen).toContainEqual({ secret: "payload-secret" });
    expect(seen).toContain("header-secret");
    expect(thirdParty.requests[0]!.body.toString()).toBe("call-secret");

    expect(run.workflowRunResponse).toMatch(REDACTED);
    const steps = run.steps.flatMap((group: { steps: Record<string, any>[] }) => group.steps);
    const [init, derive, call] = steps;
    expect(init).toMatchObject({ stepType: "Initial", out: expect.stringMatching(REDACTED) });
    expect(init.headers["X-Secret"]).toEqual([expect.stringMatching(REDACTED)]);
    expect(derive).toMatchObject({ stepName: "derive", out: expect.stringMatching(REDACTED) });
    expect(call).toMatchObject({ stepName: "call", callUrl: `${thirdParty.url}/call`, callResponseStatus: 200 });
    expect(call.callBody).toMatch(REDACTED);
    expect(call.callResponseBody).toMatch(REDACTED);
    expect(call.callHeaders["X-Secret"]).toEqual([expect.stringMatching(REDACTED)]);
    expectSecretsHidden(run);

    // Every message of the run: the trigger, the steps, the call and its callback.
    const { logs } = await (await dispatch.api("/v2/logs?count=1000")).json();
    const ofRun = logs.filter((log: { url: string }) => log.url.startsWith(app.baseUrl) || log.url.startsWith(thirdParty.url));
    expect(ofRun.length).toBeGreaterThanOrEqual(8);
    expectSecretsHidden(ofRun);
  });

  it("reads Redact-Fields on a REST trigger", async () => {
    const response = await dispatch.api(`/v2/trigger/${app.url("/secret")}`, {
      method: "POST",
      headers: { "Upstash-Redact-Fields": "body", "Content-Type": "application/json" },
      body: JSON.stringify({ secret: "payload-secret" }),
    });
    expect(response.status).toBe(200);
    const run = (await runLog((await response.json()).workflowRunId, "RUN_SUCCESS")) as unknown as Record<string, any>;
    expect(run.steps[0].steps[0].out).toMatch(REDACTED);
    expect(run.workflowRunResponse).toMatch(REDACTED);
  });

  it("shows a failed run's DLQ entry hidden", async () => {
    const { workflowRunId } = await app.client.trigger({
      url: app.url("/secret-fail"),
      body: { secret: "payload-secret" },
      headers: { "X-Secret": "header-secret" },
      redact: { body: true, header: true },
      retries: 0,
    });
    await runLog(workflowRunId, "RUN_FAILED");
    const { messages } = await (await dispatch.api("/v2/dlq?source=workflow")).json();
    const entry = messages.find((m: { workflowRunId: string }) => m.workflowRunId === workflowRunId);
    expect(entry.header["X-Secret"]).toEqual([expect.stringMatching(REDACTED)]);
    expectSecretsHidden(messages);
  });
});
