/**
 * `DELETE /v2/workflows/dlq/callback/{dlqId}` (docs/hosted-api.md §13.4): a
 * failure callback in progress — after a retry with the SDK's
 * `client.dlq.retryFailureFunction` — is cancelled, answered 302 as the hosted
 * description says; it shows CALLBACK_CANCELED, is not retried, and a
 * request when none is in progress is a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { attemptsOf, storedRun } from "../support/rows";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
let app: WorkflowApp;
/** Where the failure callbacks go: it fails the first one, then holds each until released. */
const failureUrl = useReceiver();
let release: () => void = () => {};

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/fails": {
      route: async (context) => {
        await context.run("boom", () => {
          throw new Error("boom");
        });
      },
    },
  });
});
afterAll(async () => {
  release();
  await app.close();
});

const cancelCallback = (dlqId: string) => dispatch.api(`/v2/workflows/dlq/callback/${dlqId}`, { method: "DELETE" });

/** A failed run whose failure callback failed, and its DLQ entry. */
async function runWithFailedCallback() {
  failureUrl.respond(() => ({ status: 500, body: "failure handler down" }));
  const { workflowRunId } = await app.client.trigger({ url: app.url("/fails"), retries: 0, failureUrl: `${failureUrl.url}/failed` });
  const entry = await poll(async () => {
    const { messages } = await app.client.dlq.list({ filter: { workflowRunId, failureFunctionState: "CALLBACK_FAIL" } });
    return messages[0];
  }, `the failure callback of ${workflowRunId} to fail`);
  return { workflowRunId, dlqId: entry.dlqId };
}

describe("DELETE /v2/workflows/dlq/callback/{dlqId}", () => {
  it("cancels a failure callback in progress, which then shows CALLBACK_CANCELED and is not retried", async () => {
    const { workflowRunId, dlqId } = await runWithFailedCallback();
    const gate = new Promise<void>((resolve) => (release = resolve));
    failureUrl.respond(async () => {
      await gate;
      return { status: 200 };
    });
    const arrived = failureUrl.requests.length;
    expect(await app.client.dlq.retryFailureFunction({ dlqId })).toMatchObject({ workflowRunId });
    await failureUrl.waitFor(arrived + 1);
    const entry = await (await dispatch.api(`/v2/workflows/dlq/${dlqId}`)).json();
    expect(entry.failureFunctionState).toBe("CALLBACK_INPROGRESS");

    const cancelled = await cancelCallback(dlqId);
    expect(cancelled.status).toBe(302);
    expect(await cancelled.text()).toBe("");
    release();

    const shown = await (await dispatch.api(`/v2/workflows/dlq/${dlqId}`)).json();
    expect(shown).toMatchObject({ failureFunctionState: "CALLBACK_CANCELED", failureCallbackInfo: { state: "CALLBACK_CANCELED" } });
    const { messages } = await app.client.dlq.list({ filter: { workflowRunId, failureFunctionState: "CALLBACK_CANCELED" } });
    expect(messages.map((message) => message.dlqId)).toEqual([dlqId]);
    const [run] = (await app.client.logs({ filter: { workflowRunId } })).runs;
    expect(run!.failureFunction).toMatchObject({ state: "CALLBACK_CANCELED" });

    // The attempt that was under way lands, and is not recorded: the state stays.
    await poll(async () => {
      const stored = await storedRun(dispatch, workflowRunId);
      return (await attemptsOf(dispatch, [stored!.failureCallbackMessageId!])) === 1;
    }, "the cancelled attempt to finish");
    expect((await (await dispatch.api(`/v2/workflows/dlq/${dlqId}`)).json()).failureFunctionState).toBe("CALLBACK_CANCELED");
    expect(failureUrl.requests.length).toBe(arrived + 1);

    // Nothing is in progress any more, and a cancelled failure function is not retried.
    const again = await cancelCallback(dlqId);
    expect(again.status).toBe(400);
    expect((await again.json()).error).toMatch(/no failure callback in progress \(state: CALLBACK_CANCELED\)/);
    await expect(app.client.dlq.retryFailureFunction({ dlqId })).rejects.toThrow(/has not failed \(state: CALLBACK_CANCELED\)/);
  });

  it("answers 400 when the failure callback is not in progress, and 404 for an unknown entry", async () => {
    const { dlqId } = await runWithFailedCallback();
    const failed = await cancelCallback(dlqId);
    expect(failed.status).toBe(400);
    expect((await failed.json()).error).toMatch(/no failure callback in progress \(state: CALLBACK_FAIL\)/);
    const unknown = await cancelCallback("dlq_unknown");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: expect.stringContaining("dlq_unknown") });
  });
});
