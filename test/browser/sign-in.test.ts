/**
 * Signing in to the dashboard: a Dispatch token opens it, the session survives
 * a reload, signing out ends it, a wrong token is told so, nothing is shown
 * without a session, and a read-only token sees the pages without actions.
 */
import { describe, expect, it } from "vitest";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { signIn, useBrowser } from "./support/browser";

const READONLY_TOKEN = "readonly-token-0123456789";
const dispatch = useDispatch({ readonlyTokens: [READONLY_TOKEN] });
const browser = useBrowser();

describe("signing in", () => {
  it("opens the overview with the token, keeps the session across a reload, and signs out", async () => {
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    expect(await page.textContent("header .who")).toContain("full access");
    await page.reload();
    expect(await page.textContent("h1")).toBe("Overview");
    await page.click("text=Sign out");
    await page.waitForSelector("input[name=token]");
    await page.goto(`${dispatch.baseUrl}/dashboard/messages`);
    expect(page.url()).toContain("/dashboard/login");
  });

  it("refuses a wrong token and keeps the browser signed out", async () => {
    const page = await browser.page();
    await page.goto(`${dispatch.baseUrl}/dashboard`);
    await page.fill("input[name=token]", "not-a-token-of-this-service");
    await page.click("button[type=submit]");
    expect(await page.textContent("[role=alert]")).toContain("not a token of this Dispatch");
    expect(await page.context().cookies()).toEqual([]);
  });

  it("returns to the page asked for after signing in", async () => {
    const page = await browser.page();
    await page.goto(`${dispatch.baseUrl}/dashboard/messages?state=FAILED`);
    await page.fill("input[name=token]", TEST_TOKEN);
    await page.click("button[type=submit]");
    await page.waitForSelector("h1:has-text('Messages')");
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/dashboard/messages?state=FAILED");
  });

  it("keeps the token out of the cookie, which is HttpOnly, SameSite=Strict and for /dashboard only", async () => {
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/dashboard" });
    expect(cookie!.value).not.toContain(TEST_TOKEN);
    expect(cookie!.value).not.toContain(Buffer.from(TEST_TOKEN).toString("base64url"));
  });

  it("shows a read-only token everything and offers it no action", async () => {
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, READONLY_TOKEN);
    expect(await page.textContent("header .who")).toContain("read-only");
    await page.goto(`${dispatch.baseUrl}/dashboard/queues`);
    expect(await page.locator("main form[method=post]").count()).toBe(0);
  });
});
