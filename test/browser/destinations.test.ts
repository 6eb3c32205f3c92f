/**
 * Destinations in the browser: a circuit that opens on its own shows when it
 * probes and gives up and what opened it, and a message waiting for it says
 * until when and why; a circuit opened by hand shows OPEN in the
 * destinations view with what waits in its line, its message's page says it
 * waits in the line of its destination and links to the destination's row,
 * and closing the circuit from that row delivers it to a real receiver;
 * open a circuit from its row (asking first) and filter by circuit; a
 * read-only session sees no open or close button and cannot post one.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { screenshot, signIn, useBrowser } from "./support/browser";

const READONLY_TOKEN = "readonly-token-destinations-0123456789";
// Circuits open after 5 failures of 3 messages (the one failure of `failing` opens none) and probe after a minute: not within the test.
const dispatch = useDispatch({ readonlyTokens: [READONLY_TOKEN], circuitFailures: 5, circuitCoolDownMs: 60_000, circuitMaxCoolDownMs: 60_000 });
const receiver = useReceiver();
const failing = useReceiver(() => ({ status: 500, body: '{"error":"out of order"}' }));
const unavailable = useReceiver(() => ({ status: 503 }));
const browser = useBrowser();

const api = async (path: string, init?: RequestInit) => (await dispatch.api(path, init)).json();
const destination = (url: string) => api(`/v2/destinations/${encodeURIComponent(url)}`);
const settled = (id: string, state: string) => poll(async () => (await api(`/v2/messages/${id}`)).state === state, `${id} to be ${state}`);

async function publish(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${url}`, { method: "POST", headers, body: '{"n":1}' });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.messageId;
}

async function signedIn(token = TEST_TOKEN): Promise<Page> {
  const page = await browser.page();
  await signIn(page, dispatch.baseUrl, token);
  return page;
}

const row = (page: Page, url: string) => page.locator(`tr[data-destination="${url}"]`);

describe("destinations", () => {
  it("shows a circuit that opened on its own, when it probes and why, and a message waiting for it says until when", async () => {
    for (let i = 0; i < 10; i++) await publish(`${unavailable.url}/m/${i}`, { "Svc-Retries": "10" });
    await poll(async () => (await destination(unavailable.url)).circuit === "OPEN", "the circuit to open");
    await poll(async () => (await destination(unavailable.url)).waiting > 1, "messages waiting in the line");
    const [last] = await dispatch.service.sql<{ id: string }[]>`
      select id from dispatch.messages where destination = ${unavailable.url} and destination_parked order by next_delivery_at desc, seq desc limit 1`;

    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${last!.id}`);
    const why = page.locator("section.why[data-hold=destination] p[data-reason=open]");
    await why.waitFor({ timeout: 15_000 });
    expect(await why.textContent()).toMatch(
      new RegExp(`^Waiting in the line of its destination ${unavailable.url}: its circuit is open until .+ \\(in \\d+ (s|min)\\) ` +
        "\\(\\d+ of \\d+ attempts failed in the last minute: \\d+ × HTTP 503\\); \\d+ of its messages waits? ahead of it\\.$"),
    );
    expect(await page.textContent(".card dl.facts")).toMatch(/when its destination's circuit closes \(a probe .+\)/);

    await why.locator("a[data-link=destination]").click();
    await page.waitForURL((url) => url.pathname === "/dashboard/destinations" && url.searchParams.get("destination") === unavailable.url);
    const circuit = row(page, unavailable.url).locator("td.circuit");
    expect(await circuit.locator(".badge").textContent()).toBe("OPEN");
    // It gives up an hour after it opened, a few seconds ago: "in 1 h", rounded (or "in 59 min" past half a minute).
    expect(await circuit.textContent()).toMatch(/probes .+ \(in \d+ (s|min)\)gives up .+ \(in (1 h|59 min)\)\d+ of \d+ attempts failed in the last minute/);

    // The overview counts it among the destinations holding their messages, linked to the open circuits.
    await page.goto(`${dispatch.baseUrl}/dashboard`);
    const holding = page.locator('[data-stat="Destinations holding their messages"]');
    expect(await holding.locator(".note").textContent()).toMatch(/^\d+ open/);
    await holding.locator("a").click();
    await page.waitForURL((url) => url.pathname === "/dashboard/destinations" && url.searchParams.get("circuit") === "OPEN");
    await row(page, unavailable.url).waitFor();
  });

  it("shows a circuit opened by hand and what waits in its line, says so on a waiting message's page, and closing it delivers", async () => {
    await settled(await publish(`${receiver.url}/warm`), "DELIVERED");
    await settled(await publish(`${failing.url}/down`, { "Svc-Retries": "0" }), "FAILED");
    await poll(async () => (await destination(failing.url)).lastStatus === 500, "the failing receiver's error reported");
    expect((await dispatch.api(`/v2/destinations/${receiver.url}/open`, { method: "POST" })).status).toBe(200);
    const held = [await publish(`${receiver.url}/held/0`), await publish(`${receiver.url}/held/1`)];
    await poll(async () => (await destination(receiver.url)).waiting === 2, "two messages waiting in the line");

    const page = await signedIn();
    await page.click("nav >> text=Destinations");
    await page.waitForURL(/\/dashboard\/destinations$/);
    const open = row(page, receiver.url);
    expect(await open.locator("td.circuit .badge").textContent()).toBe("OPEN");
    expect(await open.locator("td.circuit").textContent()).toContain("opened by hand");
    expect(await open.locator("td:nth-child(5)").textContent()).toBe("2");
    expect(await open.locator("td:nth-child(6)").textContent()).toContain("1 attempt, 0 % errors");
    const down = row(page, failing.url);
    expect(await down.locator("td.circuit .badge").textContent()).toBe("CLOSED");
    expect(await down.locator("td.last-answer").textContent()).toContain("HTTP 500");
    await screenshot(page, "destinations");

    await page.goto(`${dispatch.baseUrl}/dashboard/messages/${held[1]}`);
    const why = page.locator("section.why[data-hold=destination]");
    await why.waitFor({ timeout: 15_000 });
    expect(await why.locator("p").textContent()).toBe(
      `Waiting in the line of its destination ${receiver.url}: its circuit is open until it is closed by hand (it was opened by hand); ` +
        "1 of its messages waits ahead of it.",
    );
    expect(await page.textContent(".card dl.facts")).toContain("when its destination's circuit is closed by hand");
    await screenshot(page, "message-why-destination");

    await why.locator("a[data-link=destination]").click();
    await page.waitForURL((url) => url.pathname === "/dashboard/destinations" && url.searchParams.get("destination") === receiver.url);
    expect(await page.locator("tr[data-destination]").count()).toBe(1);
    await row(page, receiver.url).locator("button:has-text('Close circuit')").click();
    await page.waitForSelector(`[role=status]:has-text('Circuit closed; its waiting messages are attempted again: ${receiver.url}')`);
    expect((await destination(receiver.url)).circuit).toBe("CLOSED");
    for (const id of held) await settled(id, "DELIVERED");
    expect(receiver.requests.map((request) => request.path)).toEqual(expect.arrayContaining(["/held/0", "/held/1"]));
    expect(await row(page, receiver.url).locator("td.circuit .badge").textContent()).toBe("CLOSED");
  });

  it("opens a circuit from its row, asking first, and filters by circuit", async () => {
    const page = await signedIn();
    await page.goto(`${dispatch.baseUrl}/dashboard/destinations?circuit=CLOSED`);
    let question = "";
    page.once("dialog", (dialog) => void ((question = dialog.message()), dialog.accept()));
    await row(page, receiver.url).locator("button:has-text('Open circuit')").click();
    await page.waitForSelector(`[role=status]:has-text('Circuit opened by hand; its messages wait until it is closed by hand: ${receiver.url}')`);
    expect(question).toContain(`Open the circuit of ${receiver.url} by hand?`);
    expect(await destination(receiver.url)).toMatchObject({ circuit: "OPEN", openedByHand: true });
    // Back on the page it was taken on, filtered to closed circuits: the destination is no longer on it.
    expect(new URL(page.url()).searchParams.get("circuit")).toBe("CLOSED");
    expect(await row(page, receiver.url).count()).toBe(0);
    expect(await row(page, failing.url).count()).toBe(1);

    await page.selectOption("select[name=circuit]", "OPEN");
    await page.click("form.filters button:has-text('Filter')");
    await page.waitForURL(/circuit=OPEN/);
    const shown = await page.locator("tr[data-destination]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-destination")));
    expect(shown.sort()).toEqual([receiver.url, unavailable.url].sort());
    expect(await row(page, receiver.url).locator("button").allTextContents()).toEqual(["Close circuit"]);
  });

  it("shows a read-only session no open or close button, and refuses a close it posts anyway", async () => {
    const page = await signedIn(READONLY_TOKEN);
    await page.click("nav >> text=Destinations");
    expect(await row(page, receiver.url).locator("td.circuit .badge").textContent()).toBe("OPEN");
    expect(await page.locator("tr[data-destination] button").count()).toBe(0);
    const status = await page.evaluate(async (url) => {
      const response = await fetch(`/dashboard/destinations/${encodeURIComponent(url)}/close`, { method: "POST", body: new URLSearchParams() });
      return response.status;
    }, receiver.url);
    expect(status).toBe(403);
    expect((await destination(receiver.url)).circuit).toBe("OPEN");
  });
});
