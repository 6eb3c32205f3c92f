/**
 * The dashboard's forms in the browser: a refused form comes back on its own
 * page, with the navigation, what was typed and the domain's error beside it
 * (the API's words for the same input); publishing from the publish page
 * reaches a real receiver with the body and headers typed; times show in
 * the browser's zone with UTC in their title; a read-only session is offered
 * no form and a forged one is refused.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { type InPage, screenshot, signIn, useBrowser } from "./support/browser";

const READONLY_TOKEN = "readonly-token-0123456789";
const dispatch = useDispatch({ readonlyTokens: [READONLY_TOKEN], maxRetries: 5 });
const browser = useBrowser();
const receiver = useReceiver();

async function signedIn(token = TEST_TOKEN, page?: Page) {
  const opened = page ?? (await browser.page());
  await signIn(opened, dispatch.baseUrl, token);
  return opened;
}

/** Submits the form named `form` and waits for the page it answers; its status. */
async function submit(page: Page, form: string): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST"),
    page.click(`form[data-form=${form}] button[type=submit]`),
  ]);
  await page.waitForLoadState();
  return response.status();
}

const messageCount = async () => Number((await dispatch.service.sql`select count(*) from dispatch.messages`)[0]!.count);

describe("a refused form", () => {
  it("keeps what was typed on the URL groups page and shows the error beside it, with the navigation", async () => {
    const page = await signedIn();
    await page.click("nav >> text=URL groups");
    await page.fill("form[data-form=add-endpoint] input[name=group]", "billing");
    await page.fill("form[data-form=add-endpoint] input[name=url]", "ftp://nope");
    await page.fill("form[data-form=add-endpoint] input[name=name]", "primary");
    expect(await submit(page, "add-endpoint")).toBe(400);

    const alert = page.locator("form[data-form=add-endpoint] [role=alert]");
    expect(await alert.textContent()).toContain("endpoint url must be a URL starting with http:// or https://");
    expect(await page.inputValue("form[data-form=add-endpoint] input[name=group]")).toBe("billing");
    expect(await page.inputValue("form[data-form=add-endpoint] input[name=url]")).toBe("ftp://nope");
    expect(await page.inputValue("form[data-form=add-endpoint] input[name=name]")).toBe("primary");
    expect(await page.textContent("h1")).toBe("URL groups");
    expect(await page.locator("header nav a").allTextContents()).toContain("Queues");
    expect((await dispatch.api("/v2/topics/billing")).status).toBe(404);

    // Corrected, the same form goes through.
    await page.fill("form[data-form=add-endpoint] input[name=url]", `${receiver.url}/billing`);
    expect(await submit(page, "add-endpoint")).toBe(303);
    await page.waitForSelector("[role=status]:has-text('Endpoint added to billing')");
    expect((await (await dispatch.api("/v2/topics/billing")).json()).endpoints).toEqual([{ name: "primary", url: `${receiver.url}/billing` }]);
  });

  it("keeps the navigation on an error page, with a way back to the page it came from", async () => {
    const page = await signedIn();
    await page.click("nav >> text=Schedules");
    // As a link from the schedules page would: the page it came from is the Referer.
    await page.goto(`${dispatch.baseUrl}/dashboard/schedules/no-such-schedule`, { referer: page.url() });
    expect(await page.textContent("[role=alert]")).toContain("schedule no-such-schedule not found");
    expect(await page.locator("header nav a").count()).toBeGreaterThan(5);
    await page.click("text=Back to the page you came from");
    await page.waitForURL(/\/dashboard\/schedules$/);
  });
});

describe("the publish page", () => {
  it("publishes a message that the receiver gets with the body and headers typed, and opens its page", async () => {
    const page = await signedIn();
    await page.click("nav >> text=Publish");
    await page.fill("input[name=destination]", `${receiver.url}/orders?source=dashboard`);
    await page.selectOption("select[name=method]", "PUT");
    await page.fill("textarea[name=headers]", "Content-Type: application/json\nX-Tenant: 42\nSvc-Label: from-dashboard");
    await page.fill("textarea[name=body]", '{\n  "order": 7\n}');
    await page.fill("input[name=retries]", "2");
    await page.fill("input[name=flowControlKey]", "tenant-42");
    await page.fill("input[name=parallelism]", "1");
    await page.fill("input[name=queue]", "orders");
    await screenshot(page, "publish");
    expect(await submit(page, "publish")).toBe(303);

    await page.waitForURL(/\/dashboard\/messages\/msg_/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
    expect(await page.textContent("[role=status]")).toContain(`Published: ${id}`);
    const request = await poll(() => receiver.requests.find((received) => received.path.startsWith("/orders")), "the receiver to get the message");
    expect(request).toMatchObject({ method: "PUT", path: "/orders?source=dashboard" });
    expect(request!.body.toString()).toBe('{\n  "order": 7\n}');
    expect(request!.headers).toMatchObject({ "content-type": "application/json", "x-tenant": "42" });
    const message = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(message).toMatchObject({ maxRetries: 2, queueName: "orders", flowControlKey: "tenant-42", parallelism: 1, labels: ["from-dashboard"] });
  });

  it("shows a bad header line beside the form and keeps what was typed, publishing nothing", async () => {
    const before = await messageCount();
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/publish`);
    await page.fill("input[name=destination]", `${receiver.url}/never`);
    await page.fill("textarea[name=headers]", "X-Fine: yes\nX-Tenant 42");
    await page.fill("textarea[name=body]", "kept\nas typed");
    await page.fill("input[name=delay]", "5m");
    expect(await submit(page, "publish")).toBe(400);

    expect(await page.textContent("form[data-form=publish] [role=alert]")).toContain('header line 2 ("X-Tenant 42") must be Name: value');
    expect(await page.inputValue("input[name=destination]")).toBe(`${receiver.url}/never`);
    expect(await page.inputValue("textarea[name=headers]")).toBe("X-Fine: yes\nX-Tenant 42");
    expect(await page.inputValue("textarea[name=body]")).toBe("kept\nas typed");
    expect(await page.inputValue("input[name=delay]")).toBe("5m");
    expect(await page.locator("header nav a.here").textContent()).toBe("Publish");
    expect(await messageCount()).toBe(before);
  });

  it("refuses what the API refuses, in the API's words", async () => {
    const api = await dispatch.api(`/v2/publish/${receiver.url}/too-many`, { method: "POST", headers: { "Svc-Retries": "9" } });
    expect(api.status).toBe(412);
    const { error } = await api.json();
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/publish`);
    await page.fill("input[name=destination]", `${receiver.url}/too-many`);
    await page.fill("input[name=retries]", "9");
    expect(await submit(page, "publish")).toBe(422);
    expect(await page.textContent("form[data-form=publish] [role=alert]")).toBe(error);
    expect(await page.inputValue("input[name=retries]")).toBe("9");
  });
});

describe("times", () => {
  it("shows a time in the browser's zone, with UTC in its title, after a refresh too", async () => {
    await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "zoned" }) });
    const context = await browser.context({ timezoneId: "Asia/Kolkata", locale: "en-US" });
    const page = await signedIn(TEST_TOKEN, await context.newPage());
    await page.goto(`${dispatch.baseUrl}/dashboard/queues`);
    const time = page.locator("tr[data-queue=zoned] time");
    const at = new Date((await time.getAttribute("datetime"))!);
    const kolkata = new Date(at.getTime() + 5.5 * 3_600_000).toISOString();
    const clock = kolkata.slice(11, 19);
    expect(await time.getAttribute("title")).toBe(`${at.toISOString().slice(0, 10)} ${at.toISOString().slice(11, 19)} UTC`);
    expect(await time.locator(".at").textContent()).toMatch(new RegExp(`^(${kolkata.slice(0, 10)} )?${clock} GMT\\+5:30$`));
    expect(await time.textContent()).toMatch(/\(\d+ s ago\)|\(\d+ min ago\)/);

    // The live region is swapped in again every few seconds: still the local time.
    await page.evaluate(() => new Promise((resolve) => (globalThis as unknown as InPage).document.body.addEventListener("htmx:afterSettle", resolve, { once: true })));
    expect(await page.locator("tr[data-queue=zoned] time .at").textContent()).toContain(`${clock} GMT+5:30`);
  });
});

describe("a read-only session", () => {
  it("is offered no form to create or delete, and one it posts anyway is refused", async () => {
    await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "kept" }) });
    await dispatch.api(`/v2/topics/kept-group/endpoints`, { method: "POST", body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/kept` }] }) });
    await dispatch.api(`/v2/schedules/${receiver.url}/kept`, { method: "POST", headers: { "Svc-Cron": "0 0 1 1 *", "Svc-Schedule-Id": "kept-schedule" } });
    const keys = await (await dispatch.api("/v2/keys")).json();
    const page = await signedIn(READONLY_TOKEN);
    const pages = ["/dashboard/queues", "/dashboard/url-groups", "/dashboard/schedules", "/dashboard/schedules/kept-schedule", "/dashboard/keys", "/dashboard/publish/event", "/dashboard/publish"];
    for (const path of pages) {
      await page.goto(`${dispatch.baseUrl}${path}`);
      expect([path, await page.locator("main form[method=post]").count()]).toEqual([path, 0]);
      expect([path, await page.locator("main button:has-text('Delete')").count()]).toEqual([path, 0]);
    }
    expect(await page.textContent("main")).toContain("read-only");
    await page.goto(`${dispatch.baseUrl}/dashboard/keys`);
    expect(await page.locator("details[data-key]").count()).toBe(0);
    expect(await page.textContent("main")).not.toContain(keys.current);

    const csrf = await page.getAttribute("header input[name=_csrf]", "value");
    const forged = (path: string, fields: Record<string, string>) =>
      page.request.post(`${dispatch.baseUrl}${path}`, { form: { _csrf: csrf!, ...fields }, maxRedirects: 0 });
    const attempts = [
      await forged("/dashboard/queues", { name: "forged", parallelism: "1" }),
      await forged("/dashboard/queues/kept/delete", {}),
      await forged("/dashboard/url-groups/kept-group/delete", {}),
      await forged("/dashboard/schedules", { destination: `${receiver.url}/forged`, cron: "* * * * *" }),
      await forged("/dashboard/schedules/kept-schedule/delete", {}),
      await forged("/dashboard/publish", { destination: `${receiver.url}/forged`, method: "POST" }),
      await forged("/dashboard/publish/event", { eventId: "forged" }),
      await forged("/dashboard/keys/rotate", {}),
    ];
    for (const response of attempts) {
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain("read-only");
    }
    expect((await dispatch.api("/v2/queues/forged")).status).toBe(404);
    expect((await dispatch.api("/v2/queues/kept")).status).toBe(200);
    expect((await dispatch.api("/v2/topics/kept-group")).status).toBe(200);
    expect((await dispatch.api("/v2/schedules/kept-schedule")).status).toBe(200);
    expect(receiver.requests.filter((request) => request.path === "/forged")).toEqual([]);
    expect(await (await dispatch.api("/v2/keys")).json()).toEqual(keys);
  });
});
