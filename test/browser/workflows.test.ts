/**
 * Workflow runs in the browser, run by the official `serve()`: the list with
 * its filters, a run's step timeline (sequential steps, a parallel group, a
 * sleep), cancelling a waiting run, and restarting a failed run from the DLQ.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";
import { screenshot, signIn, useBrowser } from "./support/browser";

/** Workflow sleeps are scaled (DISPATCH_DELAY_SCALE): the run's 2 s sleep waits 20 ms. */
const dispatch = useDispatch({ delayScale: 0.01 });
const browser = useBrowser();
let app: WorkflowApp;
let failing = true;

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/orders": {
      route: async (context) => {
        const order = await context.run("load order", () => ({ id: 42, items: 2 }));
        const [stock, price] = await Promise.all([
          context.run("check stock", () => "in stock"),
          context.run("price order", () => order.items * 10),
        ]);
        await context.sleep("cool down", 2);
        return context.run("confirm", () => `${stock}, ${price}`);
      },
    },
    "/waiting": {
      route: async (context) => {
        await context.run("start", () => "started");
        await context.waitForEvent("await approval", "approval-event", { timeout: "1h" });
      },
    },
    "/flaky": {
      route: async (context) => {
        await context.run("first", () => "one");
        await context.run("second", () => {
          if (failing) throw new Error("the second step fails");
          return "two";
        });
      },
    },
  });
});
afterAll(() => app.close());

const runState = async (runId: string) => {
  const [run] = await dispatch.service.sql<{ state: string }[]>`
    select state from dispatch.workflow_runs where run_id = ${runId} order by pk desc limit 1`;
  return run?.state;
};

async function signedIn() {
  const page = await browser.page();
  await signIn(page, dispatch.baseUrl, TEST_TOKEN);
  return page;
}

describe("workflow runs", () => {
  it("lists runs by state and shows a run's step timeline", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/orders"), body: { customer: "ada" } });
    await poll(async () => (await runState(workflowRunId)) === "RUN_SUCCESS", "the run to succeed");
    const page = await signedIn();
    await page.click("nav >> text=Workflow runs");
    await page.selectOption("select[name=state]", "RUN_SUCCESS");
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/state=RUN_SUCCESS/);
    await page.click(`a:has-text("${workflowRunId}")`);
    await page.waitForSelector("h2:has-text('Steps')");
    const names = await page.locator(".step[data-step-name]").evaluateAll((steps) => steps.map((step) => step.getAttribute("data-step-name")));
    expect(names).toEqual(["init", "load order", "check stock", "price order", "cool down", "confirm"]);
    const parallel = page.locator("li[data-group=parallel]");
    expect(await parallel.count()).toBe(1);
    expect(await parallel.locator(".step").count()).toBe(2);
    expect(await page.textContent(".step[data-step-name='cool down']")).toContain("Sleeps 2 s");
    expect(await page.textContent(".card .badge")).toBe("RUN_SUCCESS");
    await screenshot(page, "workflow-run");
  });

  it("cancels a run that waits for an event", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/waiting") });
    await poll(async () => (await dispatch.service.sql`select 1 from dispatch.workflow_waiters`).length > 0, "the run to wait");
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/workflows/${workflowRunId}`);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("button:has-text('Cancel run')");
    await page.waitForSelector("[role=status]:has-text('Workflow run cancelled')");
    expect(await runState(workflowRunId)).toBe("RUN_CANCELED");
  });

  it("restarts a failed run from the DLQ, and the new run succeeds", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/flaky"), retries: 0 });
    await poll(async () => (await runState(workflowRunId)) === "RUN_FAILED", "the run to fail");
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/workflows/${workflowRunId}`);
    await page.waitForSelector("li.bad .badge:has-text('STEP_FAILED')");
    failing = false;
    await page.click("button:has-text('Restart from the beginning')");
    await page.waitForSelector("[role=status]:has-text('Restarted as a new run')");
    const restarted = new URL(page.url()).pathname.split("/").pop()!;
    expect(restarted).not.toBe(workflowRunId);
    await poll(async () => (await runState(restarted)) === "RUN_SUCCESS", "the restarted run to succeed");
    await page.waitForSelector(".card .badge:has-text('RUN_SUCCESS')", { timeout: 15_000 });
  });
});
