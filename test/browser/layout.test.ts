/**
 * What every page shares, in the browser: Dispatch's icon, linked by each
 * dashboard page and the API reference and served, so that no page asks for
 * anything that is not there (no 404 in the service's access log, which also
 * hears the browser's own icon requests, no error in the console); the
 * footer's link to the API reference, and the reference's way back;
 * Pause and Resume not in the red of the buttons that destroy.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { SECTIONS } from "../../src/http/dashboard/layout";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { signIn, useBrowser } from "./support/browser";

/** The service's access log lines (`GET /route 200 in 1.2 ms`), debug lines included. */
const logged: string[] = [];
const dispatch = useDispatch({}, { log: (line) => logged.push(line) });
const browser = useBrowser();

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
  getComputedStyle(element: unknown): { color: string };
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
