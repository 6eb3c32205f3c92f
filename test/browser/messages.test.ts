/**
 * Messages and the DLQ in the browser: filter the list, open a failed message
 * and read its attempt timeline (each attempt's own response, before the
 * retry it led to), retry its DLQ entry (from its page, or from
 * its row of the list) and watch the retry deliver to a real receiver, go
 * back from an entry to the list it was opened from, delete selected
 * entries, cancel a pending message; redacted fields stay hidden; a
 * read-only session cannot act.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { type Receiver, type Reply, startReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { screenshot, signIn, useBrowser } from "./support/browser";

const READONLY_TOKEN = "readonly-token-0123456789";
const dispatch = useDispatch({ readonlyTokens: [READONLY_TOKEN] });
const browser = useBrowser();
let receiver: Receiver;
/** Paths the receiver fails with a 500 for now. */
const failing = new Set<string>(["/orders"]);

/** Attempts /numbered has had: it fails each with its own number, in a header and the body. */
let numbered = 0;

beforeAll(async () => {
  receiver = await startReceiver((request): Reply => {
    if (request.path === "/numbered") {
      numbered += 1;
      return { status: 500, headers: { "X-Attempt": String(numbered) }, body: `{"attempt":${numbered}}` };
    }
    return failing.has(request.path)
      ? { status: 500, headers: { "X-Reason": "database locked" }, body: '{"error":"database locked"}' }
      : { status: 200, body: "ok" };
  });
});
afterAll(() => receiver.close());

async function publish(path: string, headers: Record<string, string> = {}, body = '{"order":42}'): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  expect(response.status).toBe(200);
  return (await response.json()).messageId;
}

async function stateOf(id: string): Promise<string> {
  return (await (await dispatch.api(`/v2/messages/${id}`)).json()).state;
}

const settled = (id: string, state: string) => poll(async () => (await stateOf(id)) === state, `${id} to be ${state}`);

describe("messages", () => {
  it("filters the list by state and shows a failed message's attempts, with each response", async () => {
    const failed = await publish("/orders", { "Svc-Retries": "1", "Svc-Label": "checkout" });
    const delivered = await publish("/ok");
    await settled(failed, "FAILED");
    await settled(delivered, "DELIVERED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.click("nav >> text=Messages");
    await page.selectOption("select[name=state]", "FAILED");
    await page.click("form.filters button[type=submit]");
    await page.waitForURL(/state=FAILED/);
    const shown = await page.locator("tr[data-message-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-message-id")));
    expect(shown).toEqual([failed]);
    await screenshot(page, "messages");
    await page.fill("input[name=label]", "no-such-label");
    await page.click("form.filters button[type=submit]");
    await page.waitForSelector("text=No messages match.");

    await page.goto(`${dispatch.baseUrl}/dashboard/messages?state=FAILED`);
    await page.click(`a:has-text("${failed}")`);
    const attempts = page.locator("li[data-attempt]");
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toContain("HTTP 500");
    expect(await attempts.nth(0).textContent()).toContain("Retry due");
    expect(await attempts.nth(1).textContent()).toContain("Failed for good");
    expect(await attempts.nth(1).locator("pre").textContent()).toContain('"error": "database locked"');
    expect(await attempts.nth(1).locator("table").textContent()).toContain("database locked");
    expect(await page.locator("pre[data-view=json]").textContent()).toBe('{\n  "order": 42\n}');
    await screenshot(page, "message-detail");
    await page.click("a:has-text('hex')");
    expect(await page.locator("pre[data-view=hex]").textContent()).toContain("7b 22 6f 72 64 65 72 22");

    await page.click("nav >> text=Overview");
    expect(await page.textContent("[data-stat='Failed messages'] .n")).toBe("1");
    expect(await page.textContent("[data-stat='In the DLQ'] .n")).toBe("1");
    await screenshot(page, "overview");
  });

  it("shows each attempt's response with that attempt, before the retry it led to", async () => {
    const id = await publish("/numbered", { "Svc-Retries": "2" });
    await settled(id, "FAILED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${id}`);
    const attempts = page.locator("li[data-attempt]");
    expect(await attempts.count()).toBe(3);
    for (const n of [1, 2, 3]) {
      const attempt = page.locator(`li[data-attempt="${n}"]`);
      const response = attempt.locator("details[data-response]");
      // The last attempt's response is open; the earlier ones are folded, their text there all the same.
      expect(await response.getAttribute("open")).toBe(n === 3 ? "" : null);
      expect(await response.locator("summary").textContent()).toBe(`Response to attempt ${n}`);
      expect(await response.locator("pre").textContent()).toBe(`{\n  "attempt": ${n}\n}`);
      expect(await response.locator("table").textContent()).toContain(`x-attempt${n}`);
      // What followed comes after the response: the retry it led to (attempts 1 and 2), or the failure (3).
      const order = await attempt.evaluate((item) => {
        const children = Array.from((item as unknown as { children: ArrayLike<{ getAttribute(name: string): string | null }> }).children);
        return children.map((child) => child.getAttribute("data-response") ?? child.getAttribute("data-followed")).filter((mark) => mark !== null);
      });
      expect(order).toEqual([String(n), n < 3 ? "retry" : "failure"]);
    }
    expect(await page.textContent("li[data-attempt='1'] [data-followed=retry]")).toMatch(/^Retry due .*\): attempt 2$/);
  });

  it("retries a DLQ entry, and the retry delivers to the receiver", async () => {
    failing.add("/retry-me");
    const id = await publish("/retry-me", { "Svc-Retries": "0" }, "retry body");
    await settled(id, "FAILED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.click("nav >> text=DLQ");
    await page.click(`tr:has-text("${id}") a[href^="/dashboard/dlq/"]`);
    expect(await page.textContent("main")).toContain("HTTP 500");
    failing.delete("/retry-me");
    await page.click("button:has-text('Retry')");
    await page.waitForSelector("[role=status]:has-text('Retried as a new message')");
    // The retry's page refreshes itself until the delivery lands.
    await page.waitForSelector(".card .badge.ok:has-text('DELIVERED')", { timeout: 20_000 });
    const delivered = receiver.requests.filter((request) => request.path === "/retry-me" && request.body.toString() === "retry body");
    expect(delivered.length).toBe(2);
    const dlq = await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}/retry-me`)}`)).json();
    expect(dlq.messages).toEqual([]);
  });

  it("retries a DLQ entry from its row in the list, with the session's CSRF token, and the retry delivers", async () => {
    failing.add("/row-retry");
    const ids = [await publish("/row-retry", { "Svc-Retries": "0" }, "first"), await publish("/row-retry", { "Svc-Retries": "0" }, "second")];
    for (const id of ids) await settled(id, "FAILED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/dlq?url=${encodeURIComponent(`${receiver.url}/row-retry`)}`);
    const row = page.locator(`tr[data-dlq-id]:has-text("${ids[0]}")`);
    const dlqId = await row.getAttribute("data-dlq-id");
    // Without the session's CSRF token, or from another site, the row's action is refused like every other form's.
    const action = `${dispatch.baseUrl}/dashboard/dlq/${dlqId}/retry`;
    expect((await page.request.post(action, { form: { _csrf: "forged" }, maxRedirects: 0 })).status()).toBe(403);
    const csrf = await page.inputValue("form[action='/dashboard/dlq/retry'] input[name=_csrf]");
    const crossSite = await page.request.post(action, { form: { _csrf: csrf }, headers: { Origin: "https://elsewhere.example" }, maxRedirects: 0 });
    expect(crossSite.status()).toBe(403);
    expect((await dispatch.api(`/v2/dlq/${dlqId}`)).status).toBe(200);

    failing.delete("/row-retry");
    await row.locator("button:has-text('Retry')").click();
    await page.waitForSelector("[role=status]:has-text('Retried as a new message')");
    await page.waitForSelector(".card .badge.ok:has-text('DELIVERED')", { timeout: 20_000 });
    const delivered = receiver.requests.filter((request) => request.path === "/row-retry" && request.body.toString() === "first");
    expect(delivered.length).toBe(2);
    // Only that row's entry was retried: the other one is still in the DLQ, and was not sent again.
    const left = await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}/row-retry`)}`)).json();
    expect(left.messages.map((m: { messageId: string }) => m.messageId)).toEqual([ids[1]]);
    expect(receiver.requests.filter((request) => request.body.toString() === "second").length).toBe(1);
  });

  it("leads back from a DLQ entry to the list it was opened from, its filters kept", async () => {
    failing.add("/back-to-list");
    const id = await publish("/back-to-list", { "Svc-Retries": "0" });
    await settled(id, "FAILED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    const list = `/dashboard/dlq?url=${encodeURIComponent(`${receiver.url}/back-to-list`)}`;
    await page.goto(`${dispatch.baseUrl}${list}`);
    await page.click(`tr:has-text("${id}") a[href^="/dashboard/dlq/"]`);
    await page.waitForSelector("h1.mono");
    expect(await page.textContent("main p.back a")).toBe("← DLQ, filtered");
    await page.click("main p.back a");
    await page.waitForURL(`${dispatch.baseUrl}${list}`);
    expect(await page.locator("tr[data-dlq-id]").count()).toBe(1);

    // Opened from elsewhere (a link, the message's page), it leads to the whole DLQ.
    const { dlqId } = (await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}/back-to-list`)}`)).json()).messages[0];
    await page.goto(`${dispatch.baseUrl}/dashboard/dlq/${dlqId}`);
    expect(await page.getAttribute("main p.back a", "href")).toBe("/dashboard/dlq");
    expect(await page.textContent("main p.back a")).toBe("← DLQ");
  });

  it("deletes the selected DLQ entries and keeps the others", async () => {
    failing.add("/bulk");
    const ids = [];
    for (let n = 0; n < 3; n++) ids.push(await publish("/bulk", { "Svc-Retries": "0" }));
    for (const id of ids) await settled(id, "FAILED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/dlq?url=${encodeURIComponent(`${receiver.url}/bulk`)}`);
    expect(await page.locator("tr[data-dlq-id]").count()).toBe(3);
    for (const id of ids.slice(0, 2)) await page.check(`tr:has-text("${id}") input[name=dlqIds]`);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("button:has-text('Delete selected')");
    await page.waitForSelector("[role=status]:has-text('Deleted the selected DLQ entries: 2')");
    const left = await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}/bulk`)}`)).json();
    expect(left.messages.map((m: { messageId: string }) => m.messageId)).toEqual([ids[2]]);
  });

  it("cancels a pending message", async () => {
    const id = await publish("/later", { "Svc-Delay": "1h" });
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${id}`);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("button:has-text('Cancel message')");
    await page.waitForSelector("[role=status]:has-text('Message cancelled')");
    expect(await stateOf(id)).toBe("CANCELED");
  });

  it("shows redacted headers and bodies redacted", async () => {
    const id = await publish("/ok", { "Svc-Redact-Fields": "body,header[X-Secret]", "Svc-Forward-X-Secret": "hunter2" }, "card 4111");
    await settled(id, "DELIVERED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, TEST_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${id}`);
    const text = await page.textContent("main");
    expect(text).toContain("REDACTED:");
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("card 4111");
    await page.click("a:has-text('hex')");
    expect(await page.textContent("main")).not.toContain("63 61 72 64 20 34 31 31 31");
  });

  it("offers a read-only session no action, and refuses one it posts anyway", async () => {
    failing.add("/readonly");
    const id = await publish("/readonly", { "Svc-Retries": "0" });
    await settled(id, "FAILED");
    const page = await browser.page();
    await signIn(page, dispatch.baseUrl, READONLY_TOKEN);
    await page.goto(`${dispatch.baseUrl}/dashboard/dlq`);
    expect(await page.locator("main form[method=post]").count()).toBe(0);
    expect(await page.locator("input[name=dlqIds]").count()).toBe(0);
    expect(await page.locator("tr[data-dlq-id] button").count()).toBe(0);
    const { dlqId } = (await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}/readonly`)}`)).json()).messages[0];
    const refused = await page.request.post(`${dispatch.baseUrl}/dashboard/dlq/${dlqId}/retry`, { form: { _csrf: "x" }, maxRedirects: 0 });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain("read-only");
    expect((await (await dispatch.api(`/v2/dlq/${dlqId}`)).json()).dlqId).toBe(dlqId);
  });
});
