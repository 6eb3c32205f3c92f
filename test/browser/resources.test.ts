/**
 * Queues, URL groups, schedules and flow-control keys in the browser: pause a
 * queue and resume it (its waiting message then reaches the receiver), add
 * and remove a URL group's endpoint, pause and resume a schedule and a
 * flow-control key, each change checked through the API; page through a
 * long list of keys.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { type Receiver, startReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { signIn, useBrowser } from "./support/browser";

const dispatch = useDispatch();
const browser = useBrowser();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

async function signedIn() {
  const page = await browser.page();
  await signIn(page, dispatch.baseUrl, TEST_TOKEN);
  return page;
}

describe("queues", () => {
  it("pauses a queue, which holds its messages, and resumes it, which delivers them", async () => {
    await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "emails", parallelism: 2 }) });
    const page = await signedIn();
    await page.click("nav >> text=Queues");
    const row = page.locator("tr[data-queue=emails]");
    expect(await row.textContent()).toContain("active");
    await row.locator("button:has-text('Pause')").click();
    await page.waitForSelector("[role=status]:has-text('Paused: emails')");
    expect((await (await dispatch.api("/v2/queues/emails")).json()).paused).toBe(true);
    expect(await page.locator("tr[data-queue=emails] .badge").textContent()).toBe("paused");

    const published = await dispatch.api(`/v2/enqueue/emails/${receiver.url}/welcome`, { method: "POST", body: "hi" });
    expect(published.status).toBe(200);
    // The list refreshes itself: the held message shows as lag without a reload.
    await page.waitForSelector("tr[data-queue=emails] td:nth-child(3):has-text('1')", { timeout: 15_000 });
    await page.locator("tr[data-queue=emails] button:has-text('Resume')").click();
    await page.waitForSelector("[role=status]:has-text('Resumed: emails')");
    expect((await (await dispatch.api("/v2/queues/emails")).json()).paused).toBe(false);
    const [request] = await receiver.waitFor(1);
    expect(request!.path).toBe("/welcome");
  });
});

describe("URL groups", () => {
  it("adds an endpoint to a new group and removes it", async () => {
    const page = await signedIn();
    await page.click("nav >> text=URL groups");
    await page.fill("input[name=group]", "billing");
    await page.fill("form.card input[name=url]", `${receiver.url}/billing-hook`);
    await page.fill("form.card input[name=name]", "primary");
    await page.click("button:has-text('Add endpoint')");
    await page.waitForSelector("[role=status]:has-text('Endpoint added to billing')");
    const group = await (await dispatch.api("/v2/topics/billing")).json();
    expect(group.endpoints).toEqual([{ name: "primary", url: `${receiver.url}/billing-hook` }]);
    expect(await page.textContent("section[data-url-group=billing]")).toContain("/billing-hook");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("section[data-url-group=billing] button:has-text('Remove')");
    await page.waitForSelector("[role=status]:has-text('Endpoint removed from billing')");
    expect((await dispatch.api("/v2/topics/billing")).status).toBe(404);
  });
});

describe("schedules and flow control", () => {
  it("shows a schedule's next tick, and pauses and resumes it", async () => {
    const created = await dispatch.api(`/v2/schedules/${receiver.url}/report`, {
      method: "POST",
      headers: { "Svc-Cron": "0 9 * * 1", "Svc-Schedule-Id": "weekly-report" },
    });
    expect(created.status).toBe(200);
    const page = await signedIn();
    await page.click("nav >> text=Schedules");
    const row = page.locator("tr[data-schedule=weekly-report]");
    expect(await row.textContent()).toContain("0 9 * * 1");
    expect(await row.locator("td:nth-child(5) time").getAttribute("datetime")).toMatch(/T09:00:00\.000Z$/);
    await row.locator("button:has-text('Pause')").click();
    await page.waitForSelector("[role=status]:has-text('Paused: weekly-report')");
    expect((await (await dispatch.api("/v2/schedules/weekly-report")).json()).isPaused).toBe(true);
    await page.locator("tr[data-schedule=weekly-report] button:has-text('Resume')").click();
    await page.waitForSelector("[role=status]:has-text('Resumed: weekly-report')");
    expect((await (await dispatch.api("/v2/schedules/weekly-report")).json()).isPaused).toBe(false);
  });

  it("shows a flow-control key's wait list, and pauses and resumes it", async () => {
    const headers = { "Svc-Flow-Control-Key": "tenant-7", "Svc-Flow-Control-Value": "parallelism=1" };
    await dispatch.api(`/v2/publish/${receiver.url}/flow`, { method: "POST", headers });
    await poll(async () => (await (await dispatch.api("/v2/flowControl/tenant-7")).json()).waitListSize === 0, "the first message to go");
    const page = await signedIn();
    await page.click("nav >> text=Flow control");
    await page.locator("tr[data-flow-control-key=tenant-7] button:has-text('Pause')").click();
    await page.waitForSelector("[role=status]:has-text('Paused: tenant-7')");
    expect((await (await dispatch.api("/v2/flowControl/tenant-7")).json()).isPaused).toBe(true);
    await dispatch.api(`/v2/publish/${receiver.url}/flow`, { method: "POST", headers });
    await page.waitForSelector("tr[data-flow-control-key=tenant-7] td:nth-child(3):has-text('1')", { timeout: 15_000 });
    await page.locator("tr[data-flow-control-key=tenant-7] button:has-text('Resume')").click();
    await page.waitForSelector("[role=status]:has-text('Resumed: tenant-7')");
    await poll(() => receiver.requests.filter((request) => request.path === "/flow").length === 2, "both flow-control messages");
  });
});

describe("long lists", () => {
  it("pages through the flow-control keys a search matches, and refreshes the page it is on", async () => {
    await dispatch.service.sql`
      insert into dispatch.flow_control_keys (key) select 'browse-' || lpad(i::text, 4, '0') from generate_series(0, 59) i`;
    const page = await signedIn();
    await page.click("nav >> text=Flow control");
    await page.fill("input[name=search]", "browse-");
    await page.click("button:has-text('Search')");
    await page.waitForURL(/search=browse-$/);
    const keys = () => page.locator("tr[data-flow-control-key]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-flow-control-key")));
    expect(await keys()).toHaveLength(50);
    expect(await page.locator(".pager").textContent()).not.toContain("« First");

    await page.click("text=Next »");
    await page.waitForURL(/after=browse-0049$/);
    expect(await keys()).toEqual(Array.from({ length: 10 }, (_, i) => `browse-${String(50 + i).padStart(4, "0")}`));
    expect(new URL(page.url()).search).toBe("?search=browse-&after=browse-0049");
    expect(await page.locator(".pager").textContent()).toContain("End of the list.");
    // The live region's next refresh fetches this page again: it stays on it.
    const refreshed = await page.evaluate<string>(`new Promise((resolve) => document.body.addEventListener("htmx:afterSettle",
      (event) => resolve(event.detail.pathInfo.requestPath), { once: true }))`);
    expect(refreshed).toBe("/dashboard/flow-control?search=browse-&after=browse-0049");
    expect(await keys()).toHaveLength(10);

    await page.click("text=« First");
    await page.waitForURL(/search=browse-$/);
    expect(await keys()).toHaveLength(50);
  });
});
