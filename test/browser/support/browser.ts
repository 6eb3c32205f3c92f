/**
 * The machine's headless Chromium (Debian's `/usr/bin/chromium`, never a
 * downloaded browser) driven by playwright-core, one browser per test file,
 * a fresh context (cookies) per test. Screenshots go to
 * `test/browser/screenshots/`, or to `DISPATCH_SCREENSHOTS` (`npm run
 * screenshots` writes those README.md and docs/dashboard.md show into
 * `docs/screenshots/`). A page that the Content-Security-Policy refused
 * anything (an inline script, a resource from elsewhere) fails its test.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";

export const CHROMIUM = process.env.DISPATCH_CHROMIUM ?? "/usr/bin/chromium";

/** A page of a new context for each test (`options`: its time zone, locale…); the browser lives as long as the file. */
export function useBrowser(): { page(): Promise<Page>; context(options?: BrowserContextOptions): Promise<BrowserContext> } {
  let browser: Browser | null = null;
  const contexts: BrowserContext[] = [];
  const refused: string[] = [];
  beforeAll(async () => {
    // --no-sandbox: CI and these machines run as root, where Chromium's sandbox cannot start.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    const seen = refused.splice(0);
    if (seen.length > 0) throw new Error(`the Content-Security-Policy refused:\n${seen.join("\n")}`);
  });
  afterAll(async () => {
    await browser?.close();
  });
  const context = async (options: BrowserContextOptions = {}) => {
    const made = await browser!.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    contexts.push(made);
    made.on("page", (page) =>
      page.on("console", (message) => {
        if (/Content Security Policy/.test(message.text())) refused.push(`${page.url()}: ${message.text()}`);
      }),
    );
    return made;
  };
  return { context, page: async () => (await context()).newPage() };
}

/** Signs in at `baseUrl` with `token` and waits for the overview. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.fill("input[name=token]", token);
  await page.click("button[type=submit]");
  await page.waitForSelector("h1:has-text('Overview')");
}

const SCREENSHOTS = process.env.DISPATCH_SCREENSHOTS ?? "test/browser/screenshots";

/** Saves a screenshot of the whole page as `<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * What a function run in the page (`page.evaluate`, `waitForFunction`) reads of it: the tests
 * are compiled without the DOM's types. Functions, not strings: the pages' Content-Security-Policy
 * forbids evaluating a string.
 */
export interface InPage {
  document: {
    querySelectorAll(selector: string): { length: number };
    body: { addEventListener(type: string, listener: (value: unknown) => void, options: { once: boolean }): void };
  };
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
}
