/**
 * The dialect the dashboard publishes in (issue 35, item 2): the Publish page
 * and the schedule form offer both, the deployment's chosen first, each with
 * its signature header and backoff; chosen `Upstash`, the delivery carries
 * the `Upstash-Signature` the official SDK's `Receiver` verifies, with the
 * Content-Type typed in its own field. The Signing keys page names the
 * deployment's dialect and how to change it.
 */
import { Receiver as SdkReceiver } from "@upstash/qstash";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock";
import { poll } from "../support/poll";
import { type Received, useReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { signIn, useBrowser } from "./support/browser";

const clock = new TestClock();
const dispatch = useDispatch({}, { now: clock.now });
const browser = useBrowser();
const receiver = useReceiver();

async function signedIn(path: string): Promise<Page> {
  const page = await browser.page();
  await signIn(page, dispatch.baseUrl, TEST_TOKEN);
  await page.goto(`${dispatch.baseUrl}${path}`);
  return page;
}

/** Whether the official SDK's Receiver accepts `request` as delivered to `url`. */
async function sdkVerifies(request: Received, url: string): Promise<boolean> {
  const keys = await (await dispatch.api("/v2/keys")).json();
  const sdk = new SdkReceiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  return sdk.verify({ signature: request.headers["upstash-signature"] as string, body: request.body.toString(), url });
}

const arrived = (path: string) => poll(() => receiver.requests.find((request) => request.path === path), `a delivery to ${path}`);

describe("the Publish page", () => {
  it("chooses the deployment's dialect first, says what each signs and how it backs off, and publishes in the one chosen", async () => {
    const page = await signedIn("/dashboard/publish");
    expect(await page.inputValue("select[name=dialect]")).toBe("svc");
    expect(await page.textContent("li[data-dialect=svc]")).toContain("this deployment's default");
    expect(await page.textContent("li[data-dialect=svc]")).toContain("Svc-Signature");
    expect(await page.textContent("li[data-dialect=svc]")).toContain("retries after 1 s, 7 s, 55 s, 7 min");
    expect(await page.textContent("li[data-dialect=upstash]")).toContain("Upstash-Signature");
    expect(await page.textContent("li[data-dialect=upstash]")).toContain("retries after 12 s, 2 min, 30 min, 6 h");

    await page.fill("input[name=destination]", `${receiver.url}/upstash-from-page`);
    await page.selectOption("select[name=dialect]", "upstash");
    await page.fill("input[name=contentType]", "application/json");
    await page.fill("textarea[name=headers]", "X-Tenant: 7\nSvc-Label: chosen");
    await page.fill("textarea[name=body]", '{"from":"the page"}');
    await Promise.all([page.waitForURL(/\/dashboard\/messages\/msg_/), page.click("form[data-form=publish] button[type=submit]")]);

    const request = await arrived("/upstash-from-page");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-tenant"]).toBe("7");
    expect(request.headers["svc-signature"]).toBeUndefined();
    expect(await sdkVerifies(request, `${receiver.url}/upstash-from-page`)).toBe(true);
    // The Svc- line set the option in the chosen dialect.
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
    expect((await (await dispatch.api(`/v2/messages/${id}`)).json()).labels).toEqual(["chosen"]);
  });

  it("publishes in the native dialect when it is left as chosen", async () => {
    const page = await signedIn("/dashboard/publish");
    await page.fill("input[name=destination]", `${receiver.url}/native-from-page`);
    await Promise.all([page.waitForURL(/\/dashboard\/messages\/msg_/), page.click("form[data-form=publish] button[type=submit]")]);
    const request = await arrived("/native-from-page");
    expect(request.headers["svc-signature"]).toEqual(expect.any(String));
    expect(request.headers["upstash-signature"]).toBeUndefined();
  });
});

describe("the schedule form", () => {
  it("has a Content-Type field and the dialect choice, and its ticks are delivered in the dialect chosen", async () => {
    const page = await signedIn("/dashboard/schedules");
    await page.click("summary:has-text('Create a schedule')");
    expect(await page.inputValue("form[data-form=create-schedule] select[name=dialect]")).toBe("svc");
    expect(await page.locator("form[data-form=create-schedule]").textContent()).not.toMatch(/Svc-(Retries|Delay)/);
    await page.fill("form[data-form=create-schedule] input[name=destination]", `${receiver.url}/scheduled`);
    await page.fill("form[data-form=create-schedule] input[name=cron]", "* * * * *");
    await page.fill("form[data-form=create-schedule] input[name=scheduleId]", "upstash-ticks");
    await page.selectOption("form[data-form=create-schedule] select[name=dialect]", "upstash");
    await page.fill("form[data-form=create-schedule] input[name=contentType]", "application/json");
    await page.fill("form[data-form=create-schedule] textarea[name=body]", '{"tick":true}');
    await Promise.all([page.waitForURL(/\/dashboard\/schedules\/upstash-ticks/), page.click("form[data-form=create-schedule] button[type=submit]")]);

    const schedule = await (await dispatch.api("/v2/schedules/upstash-ticks")).json();
    await clock.moveTo(dispatch, schedule.nextScheduleTime + 5);
    const request = await arrived("/scheduled");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.body.toString()).toBe('{"tick":true}');
    expect(await sdkVerifies(request, `${receiver.url}/scheduled`)).toBe(true);
  });
});

describe("the Signing keys page", () => {
  it("names the deployment's dialect, each dialect's signature header and backoff, and how to sign for the SDK's Receiver", async () => {
    const page = await signedIn("/dashboard/keys");
    expect(await page.getAttribute("[data-deployment-dialect]", "data-deployment-dialect")).toBe("svc");
    const card = (await page.textContent("[data-dialects]"))!;
    expect(card).toContain("DISPATCH_DEFAULT_DIALECT");
    expect(card).toContain("set it to upstash where receivers verify with the official SDKs' Receiver");
    expect(card).toContain("Upstash-Signature (iss Upstash)");
    expect(card).toContain("Svc-Signature (iss Dispatch)");
  });
});
