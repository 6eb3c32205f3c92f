/**
 * Why, in the browser: a message held by a flow-control key at its limit and
 * one in a paused queue say so on their pages (and the list says the latter
 * waits for its queue's resume, not a time), with links that lead to the
 * key, its messages and the queue; a failing receiver's body shows in the
 * FAILED list, the DLQ and the overview's "Failing now"; a DLQ retry links
 * both ways and the overview stops counting the original once its retry is
 * delivered; the message page's title and its way back to the list; pin,
 * unpin and reset the rate of a key from the flow-control page, each checked
 * through the API.
 */
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { screenshot, signIn, useBrowser } from "./support/browser";

const READONLY_TOKEN = "readonly-token-why-0123456789";
const dispatch = useDispatch({ readonlyTokens: [READONLY_TOKEN] });
const DOWN = '{"error":"receiver is down on purpose"}';
/** Paths answered with a 500 and `DOWN` for now; requests to /slow wait until the file ends. */
const failing = new Set(["/down"]);
const release = { open: (): void => undefined };
const released = new Promise<void>((resolve) => (release.open = resolve));
const receiver = useReceiver(async (request) => {
  if (request.path.startsWith("/slow")) await released;
  return failing.has(request.path) ? { status: 500, body: DOWN } : { status: 200, body: "ok" };
});
afterAll(() => release.open());
const browser = useBrowser();

async function publish(path: string, headers: Record<string, string> = {}, prefix = "/v2/publish/"): Promise<string> {
  const response = await dispatch.api(`${prefix}${receiver.url}${path}`, { method: "POST", headers, body: '{"n":1}' });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.messageId;
}

const api = async (path: string, init?: RequestInit) => (await dispatch.api(path, init)).json();
const settled = (id: string, state: string) => poll(async () => (await api(`/v2/messages/${id}`)).state === state, `${id} to be ${state}`);

async function signedIn(token = TEST_TOKEN): Promise<Page> {
  const page = await browser.page();
  await signIn(page, dispatch.baseUrl, token);
  return page;
}

/** Opens the message's page and waits until it says why it waits with `kind`. */
async function openHeld(page: Page, id: string, kind: string) {
  await page.goto(`${dispatch.baseUrl}/dashboard/messages/${id}`);
  await page.waitForSelector(`section.why[data-hold=${kind}]`, { timeout: 15_000 });
  return page.locator("section.why");
}

describe("why it is waiting", () => {
  it("says a message is held by its flow-control key at its limit, and its links lead to the key and its messages", async () => {
    const headers = { "Svc-Flow-Control-Key": "tenant-why", "Svc-Flow-Control-Value": "parallelism=1" };
    const busy = await publish("/slow/keyed", headers);
    await poll(() => receiver.requests.some((request) => request.path === "/slow/keyed"), "the first keyed message in flight");
    const held = await publish("/keyed", headers);
    const page = await signedIn();
    const why = await openHeld(page, held, "flow-control");
    expect(await why.textContent()).toContain("Held by flow-control key tenant-why at its parallelism limit: 1 of 1 deliveries in flight.");
    expect(await page.textContent(".card dl.facts")).toContain("tenant-why");
    await screenshot(page, "message-why-waiting");

    await why.locator("a[data-link=key]").click();
    await page.waitForURL(/\/dashboard\/flow-control\?search=tenant-why#key-tenant-why$/);
    const row = page.locator("tr#key-tenant-why");
    expect(await row.textContent()).toContain("1 / 1");

    await row.locator("a[data-link=key-messages]").click();
    await page.waitForURL(/\/dashboard\/messages\?flowControlKey=tenant-why$/);
    const listed = await page.locator("tr[data-message-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-message-id")));
    expect(listed.sort()).toEqual([busy, held].sort());
    expect(await page.inputValue("input[name=flowControlKey]")).toBe("tenant-why");

    // The message's own link to the key's messages leads to the same list.
    const again = await openHeld(page, held, "flow-control");
    await again.locator("a[data-link=key-messages]").click();
    await page.waitForURL(/\/dashboard\/messages\?flowControlKey=tenant-why$/);
    expect(await page.locator("tr[data-message-id]").count()).toBe(2);
  });

  it("says a message waits in a paused queue, and links to the queue's row", async () => {
    // Queues sorting before it, so its row is not on the first page of the list the link opens.
    for (const queueName of ["a-orders", "b-orders", "outbox"]) {
      await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName, parallelism: 1, paused: queueName === "outbox" }) });
    }
    const id = await publish("/queued", {}, "/v2/enqueue/outbox/");
    const page = await signedIn();
    const why = await openHeld(page, id, "paused-queue");
    expect(await why.textContent()).toContain("Waiting in a paused queue: outbox is paused");
    await why.locator("a[data-link=queue]").click();
    await page.waitForURL(/\/dashboard\/queues\?after=b-orders#outbox$/);
    const row = page.locator("tr[data-queue=outbox]");
    expect(await row.textContent()).toContain("paused");
    expect(await page.locator("tr[data-queue]").first().getAttribute("data-queue")).toBe("outbox");

    // Its page and the message list say it waits for the queue's resume, not a time (its creation time, before).
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${id}`);
    expect(await page.textContent("dl.facts dd:right-of(dt:has-text('Next attempt'))")).toBe("when its queue is resumed");
    await page.goto(`${dispatch.baseUrl}/dashboard/messages?queueName=outbox`);
    const next = page.locator(`tr[data-message-id="${id}"] td:last-child`);
    expect(await next.textContent()).toBe("when its queue is resumed");
    expect(await next.locator("time").count()).toBe(0);
    // Resumed, it is delivered, and the list shows when.
    expect((await dispatch.api("/v2/queues/outbox/resume", { method: "POST" })).status).toBe(200);
    await settled(id, "DELIVERED");
    await page.reload();
    expect(await next.locator("time").count()).toBe(1);
  });
});

describe("why it is failing", () => {
  it("shows the receiver's body in the FAILED list, the DLQ and the overview's failing-now card", async () => {
    const id = await publish("/down", { "Svc-Retries": "0" });
    await settled(id, "FAILED");
    const page = await signedIn();
    const card = page.locator("[data-card=failing-now]");
    const destination = card.locator(`tr[data-failing="${receiver.url}/down"]`);
    expect(await destination.textContent()).toContain(DOWN);
    expect(await destination.textContent()).toContain("HTTP 500");
    await destination.locator("a").first().click();
    await page.waitForURL(/\/dashboard\/messages\?url=/);
    expect(await page.locator(`tr[data-message-id="${id}"]`).count()).toBe(1);

    await page.goto(`${dispatch.baseUrl}/dashboard/messages?state=FAILED`);
    const row = page.locator(`tr[data-message-id="${id}"] td.last-answer`);
    expect(await row.textContent()).toContain("HTTP 500");
    expect(await row.locator(".answer").textContent()).toBe(DOWN);
    expect(await row.locator(".answer").getAttribute("title")).toContain(DOWN);

    await page.click("nav >> text=DLQ");
    const entry = page.locator(`tr:has-text("${id}") td.last-answer`);
    expect(await entry.locator(".answer").textContent()).toBe(DOWN);
    expect(await entry.textContent()).not.toContain("destination responded with status");
  });

  it("links a DLQ retry both ways, and the overview stops counting the original once the retry is delivered", async () => {
    failing.add("/flaky");
    const original = await publish("/flaky", { "Svc-Retries": "0" });
    await settled(original, "FAILED");
    const page = await signedIn();
    const failedCount = async () => Number((await page.textContent("[data-stat='Failed messages'] .n"))!.replaceAll(",", ""));
    const before = await failedCount();

    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${original}`);
    failing.delete("/flaky");
    await page.click("button:has-text('Retry from the DLQ')");
    await page.waitForSelector("[role=status]:has-text('Retried as a new message')");
    const retry = new URL(page.url()).pathname.split("/").pop()!;
    await page.waitForSelector(`[data-linked="${original}"]`);
    expect(await page.textContent(`[data-linked="${original}"]`)).toContain("FAILED");
    await page.waitForSelector(".card .badge.ok:has-text('DELIVERED')", { timeout: 20_000 });

    await page.click(`[data-linked="${original}"] a`);
    await page.waitForURL(new RegExp(`/dashboard/messages/${original}$`));
    expect(await page.textContent(`[data-linked="${retry}"]`)).toContain("DELIVERED");
    await page.click(`[data-linked="${retry}"] a`);
    await page.waitForURL(new RegExp(`/dashboard/messages/${retry}`));

    await page.click("nav >> text=DLQ");
    expect(await page.textContent(`tr[data-retried="${original}"]`)).toContain("retried, delivered");
    await screenshot(page, "dlq-retried");
    await page.click("nav >> text=Overview");
    expect(await failedCount()).toBe(before - 1);
    expect(await page.textContent("[data-stat='Failed messages']")).toContain("retried from the DLQ");
  });
});

describe("the message page", () => {
  it("is titled with the message and its destination, and leads back to the filtered list it came from", async () => {
    const id = await publish("/titled", { "Svc-Label": "titled" });
    await settled(id, "DELIVERED");
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/messages?label=titled`);
    await page.click(`a:has-text("${id}")`);
    expect(await page.textContent("h1")).toBe(`Message ${id} to ${receiver.url}/titled`);
    expect(await page.title()).toContain(`Message ${id} to ${receiver.url}/titled`);
    await page.click("a:has-text('hex')");
    await page.click("p.back a");
    await page.waitForURL(/\/dashboard\/messages\?label=titled$/);

    // A back parameter that leaves the dashboard is not followed.
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${id}?back=${encodeURIComponent("https://elsewhere.example/")}`);
    expect(await page.getAttribute("p.back a", "href")).toBe("/dashboard/messages");
  });
});

describe("flow-control actions", () => {
  it("pins, unpins and resets a key's rate, refusing a bad limit on the page with what was typed", async () => {
    const headers = { "Svc-Flow-Control-Key": "tenant-pin", "Svc-Flow-Control-Value": "rate=5, period=1m" };
    await settled(await publish("/pin", headers), "DELIVERED");
    const key = () => api("/v2/flowControl/tenant-pin");
    expect(await key()).toMatchObject({ rateCount: 1, isPinnedRate: false });
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/flow-control?search=tenant-pin`);
    const row = () => page.locator("tr[data-flow-control-key=tenant-pin]");
    const accept = () => page.once("dialog", (dialog) => void dialog.accept());

    await row().locator("summary:has-text('Pin limits')").click();
    await row().locator("input[name=parallelism]").fill("0");
    await row().locator("input[name=rate]").fill("7");
    accept();
    await row().locator("button:has-text('Pin')").click();
    await page.waitForSelector("tr[data-flow-control-key=tenant-pin] [role=alert]");
    expect(await row().locator("[role=alert]").textContent()).toContain("parallelism must be a whole number of at least 1");
    expect(await row().locator("input[name=rate]").inputValue()).toBe("7");
    expect(await key()).toMatchObject({ isPinnedParallelism: false, isPinnedRate: false });

    await row().locator("input[name=parallelism]").fill("3");
    await row().locator("input[name=period]").fill("1h");
    accept();
    await row().locator("button:has-text('Pin')").click();
    await page.waitForSelector("[role=status]:has-text('Limits pinned')");
    expect(new URL(page.url()).searchParams.get("search")).toBe("tenant-pin");
    expect(await key()).toMatchObject({ parallelismMax: 3, rateMax: 7, ratePeriod: 3600, isPinnedParallelism: true, isPinnedRate: true, rateCount: 0 });
    await screenshot(page, "flow-control-actions");

    await row().locator("button:has-text('Unpin parallelism')").click();
    await page.waitForSelector("[role=status]:has-text('Unpinned')");
    expect(await key()).toMatchObject({ isPinnedParallelism: false, isPinnedRate: true });

    await settled(await publish("/pin", headers), "DELIVERED");
    expect((await key()).rateCount).toBe(1);
    let question = "";
    page.once("dialog", (dialog) => void ((question = dialog.message()), dialog.accept()));
    await row().locator("button:has-text('Reset rate')").click();
    await page.waitForSelector("[role=status]:has-text('Rate window reset: tenant-pin')");
    expect(question).toContain("Reset the rate window of tenant-pin?");
    expect((await key()).rateCount).toBe(0);
  });

  it("shows a read-only session no action, and refuses one it posts anyway", async () => {
    const page = await signedIn(READONLY_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/flow-control?search=tenant-pin`);
    expect(await page.locator("tr[data-flow-control-key=tenant-pin] button").count()).toBe(0);
    const status = await page.evaluate(async () => {
      const body = new URLSearchParams({ parallelism: "9" });
      return (await fetch("/dashboard/flow-control/tenant-pin/pin", { method: "POST", body })).status;
    });
    expect(status).toBe(403);
    expect(await api("/v2/flowControl/tenant-pin")).toMatchObject({ parallelismMax: 0, isPinnedParallelism: false });
  });
});
