/**
 * Notifying a workflow event from the dashboard: the event page lists the
 * step waiting for it (a run served by the official `serve()`), and its
 * notify resumes the run with the data typed, which the run then returns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";
import { signIn, useBrowser } from "./support/browser";

const dispatch = useDispatch();
const browser = useBrowser();
let app: WorkflowApp;

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/approval": {
      route: async (context) => {
        const { eventData } = await context.waitForEvent("await approval", "invoice-77-approved", { timeout: "1h" });
        return context.run("record", () => eventData);
      },
    },
  });
});
afterAll(() => app.close());

describe("workflow events", () => {
  it("shows the step waiting for an event and resumes it with the data typed", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/approval") });
    await poll(async () => (await dispatch.service.sql`select 1 from dispatch.workflow_waiters`).length > 0, "the run to wait");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.click("nav >> text=Publish");
    await page.click("text=notify a workflow event");
    await page.fill("form.filters input[name=eventId]", "invoice-77-approved");
    await page.click("button:has-text('Show the steps waiting')");
    expect(await page.textContent("main h2:has-text('waiting for')")).toContain("1 step waiting for invoice-77-approved");
    expect(await page.textContent("main table")).toContain(app.url("/approval"));

    await page.fill("form[data-form=notify] textarea[name=body]", '{"approvedBy":"ada"}');
    await page.click("form[data-form=notify] button[type=submit]");
    await page.waitForSelector("[role=status]:has-text('Notified event: invoice-77-approved (1 waiting step resumed)')");
    expect(await page.textContent("main h2:has-text('waiting for')")).toContain("0 steps waiting");
    await poll(async () => {
      const [run] = await dispatch.service.sql<{ state: string; response: string | null }[]>`
        select state, response from dispatch.workflow_runs where run_id = ${workflowRunId}`;
      return run?.state === "RUN_SUCCESS" && run;
    }, "the run to finish").then((run) => expect(JSON.parse(run.response!)).toEqual({ approvedBy: "ada" }));
  });
});
