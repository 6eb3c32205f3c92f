/**
 * A run started by POSTing straight to an official `serve()` endpoint: the SDK
 * forwards its caller's request headers, `Content-Length` and `Connection`
 * included, as `Upstash-Forward-*`; Dispatch drops those hop headers
 * (RFC 9110 §7.6.1) and the run completes, `context.call` with a
 * user-given `Content-Length` included.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { messageEvents, messagesWhere, storedRun } from "../support/rows";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
let app: WorkflowApp;
const thirdParty = useReceiver(() => ({ status: 200, headers: { "Content-Type": "text/plain" }, body: "called" }));
const seen = new Map<string, unknown>();

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/direct": {
      route: async (context) => {
        const first = await context.run("first", () => 1);
        const call = await context.call("call", {
          url: `${thirdParty.url}/call`,
          method: "POST",
          body: "call body",
          headers: { "Content-Length": "99", "X-Call": "yes" },
        });
        const second = await context.run("second", () => first + 1);
        seen.set(context.workflowRunId, {
          payload: context.requestPayload,
          caller: context.headers.get("x-caller"),
          call: { status: call.status, body: call.body },
          second,
        });
        return { second };
      },
      // Called directly by its client, as in the SDK's own "live serve" tests: no signature to verify.
      options: { receiver: undefined },
    },
  });
});
afterAll(async () => {
  await app.close();
});

/** Polls `/v2/workflows/logs` until the run has left RUN_STARTED. */
function finishedRun(workflowRunId: string) {
  return poll(async () => {
    const { runs } = await (await dispatch.api(`/v2/workflows/logs?workflowRunId=${workflowRunId}`)).json();
    return runs[0] && runs[0].workflowState !== "RUN_STARTED" && runs[0];
  }, `run ${workflowRunId} to finish`);
}

it("completes a run whose caller's Content-Length serve() forwards", async () => {
  const payload = JSON.stringify({ hello: "wörld" });
  const response = await fetch(app.url("/direct"), {
    method: "POST",
    headers: { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(payload)), "X-Caller": "me" },
    body: payload,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const { workflowRunId } = (await response.json()) as { workflowRunId: string };

  // serve() forwarded the caller's framing headers; the stored run keeps only the real ones.
  const init = await storedRun(dispatch, workflowRunId);
  const userHeaders = Object.keys(init!.userHeaders).map((name) => name.toLowerCase());
  expect(userHeaders).toContain("x-caller");
  expect(userHeaders).not.toContain("content-length");
  expect(userHeaders).not.toContain("host");

  const run = await finishedRun(workflowRunId);
  expect(run.workflowState).toBe("RUN_SUCCESS");
  expect(run.workflowRunResponse).toBe('{"second":2}');
  expect(seen.get(workflowRunId)).toEqual({
    payload: { hello: "wörld" },
    caller: "me",
    call: { status: 200, body: "called" },
    second: 2,
  });
  const [call] = thirdParty.requests;
  expect(thirdParty.requests).toHaveLength(1);
  expect(call!.body.toString()).toBe("call body");
  expect(call!.headers).toMatchObject({ "content-length": String(Buffer.byteLength("call body")), "x-call": "yes" });
  const failures = [];
  for (const message of await messagesWhere(dispatch, { workflowRunIds: [workflowRunId] })) {
    const events = await messageEvents(dispatch, message.id);
    failures.push(...events.filter((event) => ["ERROR", "RETRY", "FAILED"].includes(event.state)).map((event) => event.error));
  }
  expect(failures).toEqual([]);
});
