/**
 * What every page shares, in the browser: Dispatch's icon, linked by each
 * dashboard page and the API reference and served, so that no page asks for
 * anything that is not there (no 404 in the service's access log, which also
 * hears the browser's own icon requests, no error in the console); the
 * footer's link to the API reference, and the reference's way back;
 * Pause and Resume not in the red of the buttons that destroy; the messages
 * table at 800 and 1280 px: it scrolls sideways in its own box, every column
 * within reach, the page itself never wider than the window, and each id on
 * one line (the DLQ's ids too).
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECTIONS } from "../../src/http/dashboard/shell/layout";
import { poll } from "../support/poll";
import { type Receiver, startReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { signIn, useBrowser } from "./support/browser";

/** The service's access log lines (`GET /route 200 in 1.2 ms`), debug lines included. */
const logged: string[] = [];
const dispatch = useDispatch({}, { log: (line) => logged.push(line) });
const browser = useBrowser();
let receiver: Receiver;

beforeAll(async () => {
  // Paths under /failing answer a 500 with a long body, which the list's "last answer" shows on one line.
  receiver = await startReceiver((request) =>
    request.path.startsWith("/failing")
      ? { status: 500, body: "the order service could not write order 42 to its database because the table was locked by a migration" }
      : { status: 200, body: "ok" },
  );
});
afterAll(() => receiver.close());

/** Every answer of 400 or more the page got, and every error its console showed, from now on. */
function failuresOf(page: Page): string[] {
  const failures: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
  });
  page.on("console", (message) => {
    if (message.type() === "error") failures.push(`console: ${message.text()}`);
  });
  return failures;
}

describe("the icon", () => {
  it("is linked by every dashboard page and the API reference, and served as an SVG", async () => {
    // The browser asks for an icon once, on the first page it opens (the sign-in page), and keeps what it got.
    logged.length = 0;
    const page = await browser.page();
    const failures = failuresOf(page);
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    for (const path of [...SECTIONS.map(([, , href]) => href), "/docs"]) {
      await page.goto(`${dispatch.baseUrl}${path}`);
      await page.waitForLoadState("networkidle");
      const href = await page.getAttribute("link[rel=icon]", "href");
      expect(href, path).toMatch(/^\/(dashboard|docs)\/assets\/favicon-[0-9a-f]{12}\.svg$/);
      const icon = await page.request.get(`${dispatch.baseUrl}${href}`);
      expect(icon.status(), path).toBe(200);
      expect(icon.headers()["content-type"]).toBe("image/svg+xml");
      expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
    expect(failures).toEqual([]);
    expect(logged.filter((line) => / 404 in /.test(line))).toEqual([]);
  });
});

describe("the footer", () => {
  it("links the API reference from every page, the sign-in page too, and the reference leads back to the dashboard", async () => {
    const page = await browser.page();
    await page.goto(`${dispatch.baseUrl}/dashboard/login`);
    expect(await page.getAttribute("footer a:has-text('API reference')", "href")).toBe("/docs");
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    for (const [, , href] of SECTIONS) {
      await page.goto(`${dispatch.baseUrl}${href}`);
      expect(await page.getAttribute("footer a:has-text('API reference')", "href"), href).toBe("/docs");
    }
    await page.click("footer a:has-text('API reference')");
    await page.waitForSelector(".opblock-tag-section");
    expect(new URL(page.url()).pathname).toBe("/docs");
    await page.click(".reference-bar a:has-text('Dashboard')");
    await page.waitForSelector("h1:has-text('Overview')");
  });
});

/** What a function run in the page reads of its styles (the tests are compiled without the DOM's types). */
interface Styled {
  getComputedStyle(element: unknown): { color: string; lineHeight: string; whiteSpace: string };
}

describe("buttons", () => {
  it("colour Pause amber and Resume blue, apart from the red of Delete", async () => {
    for (const [queueName, paused] of [["tone-active", false], ["tone-paused", true]] as const) {
      const created = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName, parallelism: 1, paused }) });
      expect(created.status).toBe(200);
    }
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/queues`);
    const colour = (row: string, label: string) =>
      page.locator(`tr[data-queue=${row}] button:has-text('${label}')`).evaluate((button) => (globalThis as unknown as Styled).getComputedStyle(button).color);
    const red = await colour("tone-active", "Delete");
    expect(red).toBe("rgb(198, 40, 40)");
    expect(await colour("tone-active", "Pause")).toBe("rgb(154, 103, 0)");
    expect(await colour("tone-paused", "Resume")).toBe("rgb(255, 255, 255)");
    expect(await page.locator("button.danger:has-text('Pause'), button.danger:has-text('Resume')").count()).toBe(0);
  });
});

/** What a function run in the page reads of its layout. */
interface Box {
  scrollWidth: number;
  clientWidth: number;
  scrollLeft: number;
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number; height: number };
  getClientRects(): { length: number };
  closest(selector: string): Box | null;
  querySelector(selector: string): Box | null;
}
type Window = { innerWidth: number; document: { scrollingElement: Box; querySelector(selector: string): Box } } & Styled;

/** The table's box and the page: whether the page is wider than the window, and the box scrolled to its right end. */
const measure = (page: Page) =>
  page.evaluate(() => {
    const window = globalThis as unknown as Window;
    const table = window.document.querySelector("table.messages");
    const box = table.closest(".table-scroll");
    if (box === null) return null;
    const overflows = box.scrollWidth > box.clientWidth;
    box.scrollLeft = box.scrollWidth;
    const seen = box.getBoundingClientRect();
    const lastHeader = table.querySelector("thead th:last-child")!.getBoundingClientRect();
    return {
      pageWiderThanWindow: window.document.scrollingElement.scrollWidth > window.innerWidth,
      overflows,
      lastColumnInView: lastHeader.left >= seen.left - 1 && lastHeader.right <= seen.right + 1,
      scrolledTo: box.scrollLeft,
    };
  });

/** For each id link `selector` finds: how many lines it takes (client rects), its height and line height, and whether it may wrap. */
const idLines = (page: Page, selector = "tr[data-message-id] td:first-child > a") =>
  page.locator(selector).evaluateAll((links) =>
    links.map((link) => {
      const box = link as unknown as Box;
      const style = (globalThis as unknown as Window).getComputedStyle(link);
      return { rects: box.getClientRects().length, height: box.getBoundingClientRect().height, lineHeight: parseFloat(style.lineHeight), wraps: style.whiteSpace !== "nowrap" };
    }),
  );

describe("the messages table", () => {
  it("scrolls sideways in its own box at 800 px, every column within reach, and keeps each id on one line at 800 and 1280 px", async () => {
    const long = "/a-rather-long-path/of-a-destination/that-goes-on/and-on?with=a&query=string&more=than&fits=on-a-line";
    const published: string[] = [];
    for (const path of [long, `/failing${long}`]) {
      const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers: { "Svc-Label": "checkout", "Svc-Retries": "0" }, body: "{}" });
      expect(response.status).toBe(200);
      published.push((await response.json()).messageId);
    }
    await poll(async () => (await (await dispatch.api(`/v2/messages/${published[1]}`)).json()).state === "FAILED", "the failing message to fail");
    const context = await browser.context({ viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/messages`);
    await page.waitForSelector("tr[data-message-id]");

    const narrow = await measure(page);
    expect(narrow).toEqual({ pageWiderThanWindow: false, overflows: true, lastColumnInView: true, scrolledTo: expect.any(Number) });
    expect(narrow!.scrolledTo).toBeGreaterThan(0);
    const ids = await idLines(page);
    expect(ids.length).toBe(2);
    for (const id of ids) expect(id).toMatchObject({ rects: 1, wraps: false });

    await page.setViewportSize({ width: 1280, height: 900 });
    const wide = await measure(page);
    expect(wide).toMatchObject({ pageWiderThanWindow: false, lastColumnInView: true });
    const shown = await idLines(page);
    expect(shown.length).toBe(2);
    for (const id of shown) {
      expect(id).toMatchObject({ rects: 1, wraps: false });
      expect(id.height).toBeLessThan(id.lineHeight * 1.5);
    }
    // The DLQ's entries too (the failing message's), in a box of their own.
    await page.goto(`${dispatch.baseUrl}/dashboard/dlq`);
    expect(await page.locator(".table-scroll > table.dlq").count()).toBe(1);
    const entries = await idLines(page, "tr[data-dlq-id] td.id > a");
    expect(entries.length).toBe(1);
    expect(entries[0]).toMatchObject({ rects: 1, wraps: false });
  });
});
