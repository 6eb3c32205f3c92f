/**
 * Why a workflow step fails, in the browser, with a real `serve()` app: the
 * runs list saying a run retries a step, with its last error; the error a
 * step threw (its message, and its stack a frame a line) on the run page
 * while the step retries and after the run failed, in the failure
 * function's box too; how long each step took, drawn on the run's time axis;
 * the way back to the list the run was opened from; an answer cut off at
 * the response size limit, marked so; and "Retry now" for a
 * step (or any message) waiting out a 30-minute backoff, which delivers it at
 * once. Backoff runs at its real length here, so only "Retry now" can bring
 * the retry before the test ends.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { storedMessage } from "../support/rows";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";
import { screenshot, signIn, useBrowser } from "./support/browser";

const READONLY = "workflow-errors-readonly-token-0123456789";
const dispatch = useDispatch({ retryDelayScale: 1, readonlyTokens: [READONLY] });
/** `/flaky/...` fails its first attempt, then succeeds. */
const receiver = useReceiver((req) => {
  const first = receiver.requests.filter((r) => r.path === req.path).length === 1;
  return first ? { status: 500, body: '{"error":"receiver is down on purpose"}' } : { status: 200, body: "ok" };
});
const browser = useBrowser();
const REJECTED = "payment provider rejected card 4242";
/** Responses are kept up to this many bytes (DISPATCH_MAX_MESSAGE_SIZE, its default). */
const MAX_RESPONSE_BYTES = 1_048_576;
/** A retry delay of 30 minutes (a Retry-Delay expression is in milliseconds). */
const THIRTY_MINUTES = "1800000";
let app: WorkflowApp;
let rejecting = true;

/** The error the step throws, its stack naming files from the project's root, as the screenshots show it. */
function rejected(): Error {
  const error = new Error(REJECTED);
  error.stack = error.stack?.replaceAll(`file://${process.cwd()}/`, "").replaceAll(`${process.cwd()}/`, "");
  return error;
}

/** An error whose answer runs past the response size limit: a stack of more than `MAX_RESPONSE_BYTES` of frames. */
function oversized(): Error {
  const error = new Error("export failed");
  const frame = "    at exportRow (export.ts:1:1)\n";
  error.stack = `Error: export failed\n${frame.repeat(Math.ceil(MAX_RESPONSE_BYTES / frame.length))}`;
  return error;
}

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/checkout": {
      route: async (context) => {
        await context.run("load order", () => ({ id: 7, total: 42 }));
        await context.run("charge card", () => {
          if (rejecting) throw rejected();
          return "charged";
        });
        await context.run("confirm", () => "confirmed");
      },
    },
    "/doomed": {
      route: async (context) => {
        await context.run("load order", () => ({ id: 8 }));
        await context.run("charge card", () => {
          throw rejected();
        });
      },
      options: { failureFunction: async () => "refund issued" },
    },
    "/oversized": {
      route: async (context) => {
        await context.run("export", () => {
          throw oversized();
        });
      },
    },
  });
});
afterAll(() => app.close());

const runState = async (runId: string) => {
  const [run] = await dispatch.service.sql<{ state: string; failureState: string | null }[]>`
    select state, failure_callback_state as "failureState" from dispatch.workflow_runs where run_id = ${runId} order by pk desc limit 1`;
  return run;
};

/** The run's message waiting out its retry backoff, once there is one. */
const messageInBackoff = (runId: string) =>
  poll(async () => {
    const [row] = await dispatch.service.sql<{ id: string }[]>`
      select m.id from dispatch.messages m join dispatch.workflow_runs r on r.pk = m.workflow_run_pk
      where r.run_id = ${runId} and m.state = 'RETRY' and m.due_at > now()`;
    return row?.id;
  }, "a step waiting out its backoff");

/** A message published to `path` of the receiver, once its first attempt failed and it waits out a 30-minute backoff. */
async function publishedInBackoff(path: string): Promise<string> {
  const published = await dispatch.api(`/v2/publish/${receiver.url}${path}`, {
    method: "POST",
    headers: { "Svc-Retries": "2", "Svc-Retry-Delay": THIRTY_MINUTES },
    body: "hello",
  });
  const { messageId } = await published.json();
  await poll(async () => (await storedMessage(dispatch, messageId))?.dueAt != null, "the message to wait out its backoff");
  return messageId;
}

async function signedIn(token = TEST_TOKEN) {
  const page = await browser.page();
  await signIn(page, dispatch.baseUrl, token);
  return page;
}

/** The lines of the stack shown in `scope`, and the text around them. */
async function stackOf(page: Awaited<ReturnType<typeof signedIn>>, scope: string) {
  const lines = await page.locator(`${scope} ol.stack li`).allTextContents();
  const text = (await page.textContent(scope)) ?? "";
  return { lines, text };
}

describe("a failing workflow step", () => {
  it("shows the error the step threw while it retries, and Retry now delivers the retry at once", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/checkout"), retries: 3, retryDelay: THIRTY_MINUTES });
    const waiting = await messageInBackoff(workflowRunId);
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/workflows?workflowRunId=${workflowRunId}`);
    // The list says the run is retrying a step, which, with its last error and when it is tried next.
    const retryingRow = page.locator(`tr[data-run-id="${workflowRunId}"] [data-retrying]`);
    expect(await retryingRow.getAttribute("data-retrying")).toBe(waiting);
    const said = (await retryingRow.textContent())!;
    expect(said).toContain("retrying step “charge card” · failed 1 attempt of 4");
    expect(said).toMatch(/next .*\(in (29|30) min\)/);
    expect(await retryingRow.locator(".answer").textContent()).toBe(`Error: ${REJECTED}`);
    await page.click(`a:has-text("${workflowRunId}")`);
    await page.waitForSelector("h2:has-text('Steps')");

    // The title names the run and its workflow; the way back leads to the list it came from.
    expect(await page.title()).toContain(workflowRunId);
    expect(await page.textContent("h1")).toContain(app.url("/checkout"));
    expect(await page.getAttribute("main p.back a", "href")).toBe(`/dashboard/workflows?workflowRunId=${workflowRunId}`);

    const retrying = "[data-step-state=STEP_RETRY]";
    expect(await page.textContent(`${retrying} strong`)).toBe("charge card");
    expect(await page.textContent(`${retrying} .error-message`)).toBe(`Error: ${REJECTED}`);
    expect(await page.textContent(`${retrying} .error-message`)).not.toContain("destination responded");
    const { lines, text } = await stackOf(page, retrying);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines[0]!.trim()).toMatch(/^at /);
    expect(text).not.toContain("\\n");
    expect(await page.textContent(`${retrying} [data-next-attempt]`)).toMatch(/in (29|30) min/);

    // Each finished step says how long it took, with its bar; the retrying one how long it has been at it.
    expect(await page.textContent(".step[data-step-name='load order'] .span-words")).toMatch(/^took \d/);
    expect(await page.locator(".step[data-step-name='load order'] .span-bar").count()).toBe(1);
    expect(await page.textContent(`${retrying} .span-words`)).toMatch(/^under way for \d/);
    await screenshot(page, "workflow-run-retrying");

    rejecting = false;
    await page.click("button:has-text('Retry “charge card” now')");
    await page.waitForSelector("[role=status]:has-text('Due now')");
    expect(new URL(page.url()).searchParams.get("back")).toBe(`/dashboard/workflows?workflowRunId=${workflowRunId}`);
    await poll(async () => (await runState(workflowRunId))?.state === "RUN_SUCCESS", "the retried step to run and the run to succeed");
    expect((await storedMessage(dispatch, waiting))?.state).toBe("DELIVERED");
    await page.waitForSelector(".card .badge:has-text('RUN_SUCCESS')", { timeout: 15_000 });
    const names = await page.locator(".step[data-step-name]").evaluateAll((steps) => steps.map((s) => s.getAttribute("data-step-name")));
    expect(names).toEqual(["init", "load order", "charge card", "confirm"]);
    // The step that waited out a backoff took as long as it waited, far longer than the others.
    expect(await page.textContent(".step[data-step-name='charge card'] .span-words")).toMatch(/^took \d/);
    // Done, the run is no longer said to be retrying in the list.
    await page.goto(`${dispatch.baseUrl}/dashboard/workflows?workflowRunId=${workflowRunId}`);
    expect(await page.textContent(`tr[data-run-id="${workflowRunId}"] .badge`)).toBe("RUN_SUCCESS");
    expect(await page.locator("[data-retrying]").count()).toBe(0);
  });

  it("shows the error in the failed step and in the failure function once the run failed", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/doomed"), retries: 1, retryDelay: "10" });
    await poll(async () => (await runState(workflowRunId))?.failureState === "CALLBACK_SUCCESS", "the run to fail and its failure function to run");
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/workflows/${workflowRunId}`);
    await page.waitForSelector("h2:has-text('Steps')");

    const failed = "[data-step-state=STEP_FAILED]";
    expect(await page.textContent(`${failed} .error-message`)).toBe(`Error: ${REJECTED}`);
    expect(await page.textContent(`${failed} summary:has-text('earlier failed attempt')`)).toContain("1 earlier failed attempt");
    expect(await page.textContent(`${failed} .span-words`)).toMatch(/^took \d/);

    const box = "[data-failure-function]";
    expect(await page.textContent(`${box} .error-message`)).toBe(`Error: ${REJECTED}`);
    const { lines, text } = await stackOf(page, box);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((line) => !line.includes("\n"))).toBe(true);
    expect(text).not.toContain("\\n");
    expect(text).not.toContain('{"error"');
    await screenshot(page, "workflow-run-failed");
  });
});

describe("a stored answer", () => {
  it("is marked cut off when it reached the response size limit", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/oversized"), retries: 0 });
    await poll(async () => (await runState(workflowRunId))?.state === "RUN_FAILED", "the run to fail");
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/workflows/${workflowRunId}`);
    const failed = "[data-step-state=STEP_FAILED]";
    await page.waitForSelector(failed);
    expect(await page.textContent(`${failed} [data-body-note]`)).toContain("Cut off: only the first 1,048,576 bytes of a response are kept");
  });
});

describe("retry now", () => {
  it("delivers any message waiting out a 30-minute backoff from its page", async () => {
    const messageId = await publishedInBackoff("/flaky/one");
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${messageId}`);
    await page.click("button:has-text('Retry now')");
    await page.waitForSelector("[role=status]:has-text('Due now')");
    expect(new URL(page.url()).pathname).toBe(`/dashboard/messages/${messageId}`);
    await receiver.waitFor(2);
    expect(receiver.requests[1]!.headers["svc-retried"]).toBe("1");
    await poll(async () => (await storedMessage(dispatch, messageId))?.state === "DELIVERED", "the retry to be delivered");
    await page.waitForSelector(".card .badge:has-text('DELIVERED')", { timeout: 15_000 });
    expect(await page.locator("button:has-text('Retry now')").count()).toBe(0);
  });

  it("is not offered to a read-only session, which may not post it either", async () => {
    const messageId = await publishedInBackoff("/flaky/two");
    const page = await signedIn(READONLY);
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${messageId}`);
    await page.waitForSelector("h2:has-text('Attempts')");
    expect(await page.locator("button:has-text('Retry now')").count()).toBe(0);
    const posted = await page.request.post(`${dispatch.baseUrl}/dashboard/messages/${messageId}/retry-now`, { form: { _csrf: "none" } });
    expect(posted.status()).toBe(403);
    expect((await storedMessage(dispatch, messageId))?.state).toBe("RETRY");
  });
});
