/**
 * The API reference at `/docs` in the browser: every request the page makes
 * goes to this server (anything else is refused and fails the test); the
 * groups come in the document's order, publishing first; the search finds
 * operations by what they do; and "try it" publishes, with the token pasted
 * once under "Authorize", a message that reaches a real receiver.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { type InPage, screenshot, useBrowser } from "./support/browser";

const dispatch = useDispatch();
const browser = useBrowser();
let receiver: Receiver;
/** The requests of this test's pages to any host but 127.0.0.1 (refused), and every request they made. */
let outside: string[] = [];
let requested: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
afterEach(() => {
  expect(outside).toEqual([]);
  outside = [];
  requested = [];
});

/** A context whose every request to another host is refused and recorded. */
async function localOnly(): Promise<BrowserContext> {
  const context = await browser.context();
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    requested.push(url.pathname);
    if (url.hostname === "127.0.0.1") return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  return context;
}

/** The reference, loaded: its groups are on the page. */
async function reference(): Promise<Page> {
  const page = await (await localOnly()).newPage();
  await page.goto(`${dispatch.baseUrl}/docs`);
  await page.waitForSelector(".opblock-tag-section");
  return page;
}

/** Waits until `count` elements match `selector` (the search applies a moment after typing). */
const shown = (page: Page, selector: string, count: number) =>
  page.waitForFunction(([css, n]) => (globalThis as unknown as InPage).document.querySelectorAll(css).length === n, [selector, count] as const);

/** The groups shown, in order. */
const groups = (page: Page) => page.locator("h3.opblock-tag").evaluateAll((tags) => tags.map((tag) => tag.getAttribute("data-tag")));

/** The operations shown, as `METHOD /path`. */
const operations = (page: Page) =>
  page.locator(".opblock-summary").evaluateAll((rows) =>
    rows.map((row) => `${row.querySelector(".opblock-summary-method")?.textContent} ${row.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`),
  );

describe("the API reference", () => {
  it("lists the groups with publishing first, each operation under its group, loading nothing from elsewhere", async () => {
    const page = await reference();
    expect(await groups(page)).toEqual([
      "Publish",
      "Messages",
      "Queues",
      "URL groups",
      "Schedules",
      "DLQ",
      "Logs",
      "Flow control",
      "Destinations",
      "Workflows",
      "Signing keys",
      "Projects",
      "Operations",
    ]);
    const publish = page.locator(".opblock-tag-section", { has: page.locator("h3[data-tag=Publish]") });
    expect(await publish.locator(".opblock-tag").textContent()).toContain("Publish a message to a URL");
    expect(await operations(page)).toContain("POST /v2/publish/{destination}");
    await page.waitForLoadState("networkidle");
    // The route saw the page's requests (the check in afterEach is not vacuous).
    expect(requested).toEqual(expect.arrayContaining(["/docs", "/openapi.json", expect.stringMatching(/^\/docs\/assets\/swagger-ui-bundle-/)]));
  });

  it("finds operations by resource, path or what they do", async () => {
    const page = await reference();
    const search = page.locator(".operation-filter-input");
    await search.fill("schedules");
    await shown(page, "h3.opblock-tag", 1);
    expect(await groups(page)).toEqual(["Schedules"]);
    expect(await operations(page)).toContain("POST /v2/schedules/{destination}");
    await screenshot(page, "api-reference");

    await search.fill("pause a schedule");
    await shown(page, ".opblock-summary", 2);
    expect(await groups(page)).toEqual(["Schedules"]);
    expect(await operations(page)).toEqual(["PATCH /v2/schedules/{id}/pause", "POST /v2/schedules/{id}/pause"]);

    // "cancel" is in no path nor group: found by the operations' summaries.
    await search.fill("cancel");
    await shown(page, "h3.opblock-tag", 2);
    expect(await groups(page)).toEqual(["Messages", "Workflows"]);
    expect(await operations(page)).toContain("DELETE /v2/messages/{id}");
  });

  it("publishes a message with 'try it' and the token pasted, the receiver gets it, and the token is not kept", async () => {
    const page = await reference();
    await page.click("button.btn.authorize");
    await page.fill("input[aria-label=auth-bearer-value]", TEST_TOKEN);
    await page.click(".auth-btn-wrapper button.authorize");
    await page.click(".auth-btn-wrapper button.btn-done");

    const publish = page.locator("#operations-Publish-postV2Publish");
    await publish.locator(".opblock-summary").click();
    await publish.locator("tr[data-param-name=destination] input").fill(`${receiver.url}/orders`);
    await publish.locator("textarea.body-param__text").fill('{"order":42}');
    const sent = page.waitForRequest((request) => request.url().includes("/v2/publish/"));
    await publish.locator("button.execute").click();
    expect((await sent).headers().authorization).toBe(`Bearer ${TEST_TOKEN}`);
    await publish.locator(".live-responses-table .response-col_status:has-text('200')").waitFor();
    expect(await publish.locator(".live-responses-table").textContent()).toContain("messageId");

    const [delivered] = await receiver.waitFor(1);
    expect(delivered!.path).toBe("/orders");
    expect(delivered!.body.toString()).toBe('{"order":42}');
    expect(delivered!.headers["content-type"]).toBe("application/json");

    // Not kept in the browser: after a reload the token must be pasted again, and nothing of it is in storage.
    await page.reload();
    await page.waitForSelector("button.btn.authorize.unlocked");
    const stored = await page.evaluate(() => JSON.stringify({ ...(globalThis as unknown as InPage).localStorage }) + JSON.stringify({ ...(globalThis as unknown as InPage).sessionStorage }));
    expect(stored).not.toContain(TEST_TOKEN);
  });
});
