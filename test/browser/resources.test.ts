/**
 * Queues, URL groups, schedules and flow-control keys in the browser: create
 * and delete a queue, pause it and resume it (its waiting message then
 * reaches the receiver), create a URL group with its first endpoint, remove
 * an endpoint and delete a group, create a schedule, see its page (next
 * ticks, the messages it made) and delete it, pause and resume a schedule
 * and a flow-control key, rotate the signing keys, each change checked
 * through the API; page through a long list of keys.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock";
import { poll } from "../support/poll";
import { type Receiver, startReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { screenshot, signIn, useBrowser } from "./support/browser";

const clock = new TestClock();
const dispatch = useDispatch({}, { now: clock.now });
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

describe("creating and deleting", () => {
  it("creates a queue with its parallelism, refuses a bad one beside the form, and deletes a queue", async () => {
    const page = await signedIn();
    await page.click("nav >> text=Queues");
    await page.fill("form[data-form=create-queue] input[name=name]", "reports");
    await page.fill("form[data-form=create-queue] input[name=parallelism]", "lots");
    await page.click("button:has-text('Create queue')");
    expect(await page.textContent("form[data-form=create-queue] [role=alert]")).toContain('parallelism must be a whole number, got "lots"');
    expect(await page.inputValue("form[data-form=create-queue] input[name=name]")).toBe("reports");

    await page.fill("form[data-form=create-queue] input[name=parallelism]", "3");
    await page.click("button:has-text('Create queue')");
    await page.waitForSelector("[role=status]:has-text('Queue saved: reports')");
    expect(await (await dispatch.api("/v2/queues/reports")).json()).toMatchObject({ parallelism: 3, paused: false });
    expect(await page.locator("tr[data-queue=reports] td:nth-child(4)").textContent()).toBe("3");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("tr[data-queue=reports] button:has-text('Delete')");
    await page.waitForSelector("[role=status]:has-text('Queue deleted')");
    expect((await dispatch.api("/v2/queues/reports")).status).toBe(404);
    expect(await page.locator("tr[data-queue=reports]").count()).toBe(0);
  });

  it("creates a URL group with its first endpoint and deletes the group", async () => {
    const page = await signedIn();
    await page.click("nav >> text=URL groups");
    await page.fill("form[data-form=add-endpoint] input[name=group]", "fanout");
    await page.fill("form[data-form=add-endpoint] input[name=url]", `${receiver.url}/fanout-1`);
    await page.click("button:has-text('Add endpoint')");
    await page.waitForSelector("[role=status]:has-text('Endpoint added to fanout')");
    await page.fill("form[data-form=add-endpoint] input[name=group]", "fanout");
    await page.fill("form[data-form=add-endpoint] input[name=url]", `${receiver.url}/fanout-2`);
    await page.click("button:has-text('Add endpoint')");
    await page.waitForSelector("[role=status]:has-text('Endpoint added to fanout')");
    expect((await (await dispatch.api("/v2/topics/fanout")).json()).endpoints).toHaveLength(2);
    expect(await page.textContent("section[data-url-group=fanout] h2")).toContain("(2 endpoints)");

    let question = "";
    page.once("dialog", (dialog) => void ((question = dialog.message()), dialog.accept()));
    await page.click("section[data-url-group=fanout] button:has-text('Delete group')");
    await page.waitForSelector("[role=status]:has-text('URL group deleted: fanout')");
    expect(question).toContain("Delete URL group fanout and its 2 endpoints?");
    expect((await dispatch.api("/v2/topics/fanout")).status).toBe(404);
  });

  it("creates a schedule, whose page shows its next ticks and the messages it made, and deletes it", async () => {
    const page = await signedIn();
    await page.click("nav >> text=Schedules");
    await page.click("summary:has-text('Create a schedule')");
    await page.fill("form[data-form=create-schedule] input[name=destination]", `${receiver.url}/hourly`);
    await page.fill("form[data-form=create-schedule] input[name=cron]", "0 * * * *");
    await page.fill("form[data-form=create-schedule] input[name=scheduleId]", "hourly-digest");
    await page.fill("form[data-form=create-schedule] input[name=retries]", "1");
    await page.fill("form[data-form=create-schedule] textarea[name=headers]", "X-Digest: hourly");
    await page.fill("form[data-form=create-schedule] textarea[name=body]", "digest please");
    await page.click("button:has-text('Create schedule')");
    await page.waitForSelector("[role=status]:has-text('Schedule saved: hourly-digest')");
    expect(new URL(page.url()).pathname).toBe("/dashboard/schedules/hourly-digest");
    const created = await (await dispatch.api("/v2/schedules/hourly-digest")).json();
    expect(created).toMatchObject({ cron: "0 * * * *", destination: `${receiver.url}/hourly`, retries: 1, body: "digest please" });
    expect(created.header).toMatchObject({ "X-Digest": ["hourly"] });

    // The next five ticks, on the hour, the first the one the API names.
    const ticks = await page.locator("ol.ticks time").evaluateAll((times) => times.map((time) => time.getAttribute("datetime")));
    expect(ticks).toHaveLength(5);
    expect(ticks[0]).toBe(new Date(created.nextScheduleTime).toISOString());
    expect(ticks.every((tick) => /T\d\d:00:00\.000Z$/.test(tick!))).toBe(true);
    expect(Date.parse(ticks[4]!) - Date.parse(ticks[0]!)).toBe(4 * 3_600_000);
    expect(await page.textContent("main")).toContain("None yet.");

    // A tick comes: its message shows on the page (refreshed in place), delivered.
    await clock.moveTo(dispatch, created.nextScheduleTime + 5);
    const request = await poll(() => receiver.requests.find((received) => received.path === "/hourly"), "the schedule's tick");
    expect(request.body.toString()).toBe("digest please");
    await page.waitForSelector("#made tr[data-message-id] .badge:has-text('DELIVERED')", { timeout: 15_000 });
    const messageId = await page.getAttribute("#made tr[data-message-id]", "data-message-id");
    await page.waitForSelector(`[data-last-tick]:has-text('${messageId} SUCCESS')`);
    expect((await (await dispatch.api(`/v2/messages/${messageId}`)).json()).scheduleId).toBe("hourly-digest");
    await screenshot(page, "schedule");

    await page.click("button:has-text('Pause')");
    await page.waitForSelector("[role=status]:has-text('Paused: hourly-digest')");
    expect(new URL(page.url()).pathname).toBe("/dashboard/schedules/hourly-digest");
    expect(await page.textContent("main h2:has-text('Ticks once resumed')")).toBeTruthy();

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("button:has-text('Delete')");
    await page.waitForSelector("[role=status]:has-text('Schedule deleted: hourly-digest')");
    expect(new URL(page.url()).pathname).toBe("/dashboard/schedules");
    expect((await dispatch.api("/v2/schedules/hourly-digest")).status).toBe(404);
  });
});

describe("signing keys", () => {
  it("shows the signing keys and rotates them: the next key becomes the current one", async () => {
    const before = await (await dispatch.api("/v2/keys")).json();
    const page = await signedIn();
    await page.click("nav >> text=Signing keys");
    await page.click("details[data-key=next] summary");
    expect(await page.textContent("details[data-key=next] pre")).toBe(before.next);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("button:has-text('Rotate')");
    await page.waitForSelector("[role=status]:has-text('Signing keys rotated')");
    const after = await (await dispatch.api("/v2/keys")).json();
    expect(after.current).toBe(before.next);
    expect(after.next).not.toBe(before.next);
    expect(await page.textContent("details[data-key=current] pre")).toBe(before.next);
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
    expect(await row.locator("td:first-child a").getAttribute("href")).toBe("/dashboard/schedules/weekly-report");
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
