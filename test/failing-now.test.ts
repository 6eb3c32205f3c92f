/**
 * What is failing, as the dashboard reads it: each listed message's last
 * answer (status and the receiver's body), the destinations failing in the
 * last hour with their last answer (until a delivery follows their latest
 * error, such as a DLQ retry's), and DLQ retries linked both ways — the
 * failed message names its retry, the retry its original, the retries are
 * listed newest first and the failed ones retried are not counted as failing
 * — while the API answers as it did.
 */
import { describe, expect, it } from "vitest";
import { recentRetries, retryLinks } from "../src/domain/dlq/retry-links";
import { listMessages } from "../src/domain/messages/list";
import { findMessage } from "../src/domain/messages/message";
import { failingNow } from "../src/domain/overview/failing-now";
import { readTotals } from "../src/domain/overview/totals";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";
import { dashboardSession } from "./support/dashboard-session";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
const DOWN = '{"error":"receiver is down on purpose"}';
/** Paths answered with a 500 and `DOWN` for now. */
const failing = new Set(["/down", "/flaky"]);
/** Paths answered with a 500 and `DOWN` the first time only. */
const failingOnce = new Set(["/once"]);
const receiver = useReceiver((request) =>
  failing.has(request.path) || failingOnce.delete(request.path) ? { status: 500, body: DOWN } : { status: 200, body: "ok" },
);

async function publish(path: string, retries = 0): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers: { "Svc-Retries": String(retries) }, body: "{}" });
  expect(response.status).toBe(200);
  return (await response.json()).messageId;
}

const stateOf = async (id: string) => (await (await dispatch.api(`/v2/messages/${id}`)).json()).state;
const settled = (id: string, state: string) => poll(async () => (await stateOf(id)) === state, `${id} to be ${state}`);
const NO_FILTER = { project: DEFAULT_PROJECT, filter: {}, range: { fromDate: null, toDate: null }, cursor: null, count: 50 };

describe("what is failing", () => {
  it("lists each message with its last answer, and the destinations failing in the last hour with theirs", async () => {
    const down = [await publish("/down", 1), await publish("/down"), await publish("/down")];
    const flaky = await publish("/flaky");
    const fine = await publish("/fine");
    for (const id of [...down, flaky]) await settled(id, "FAILED");
    await settled(fine, "DELIVERED");

    const { items } = await listMessages(dispatch.service.sql, { ...NO_FILTER, states: null });
    const byId = new Map(items.map((item) => [item.id, item]));
    expect(byId.get(down[0]!)!.last).toEqual({ status: 500, error: expect.any(String), body: Buffer.from(DOWN) });
    expect(byId.get(fine)!.last).toMatchObject({ status: 200 });

    const failingDestinations = await failingNow(dispatch.service.sql, DEFAULT_PROJECT, 5);
    expect(failingDestinations.map((d) => [d.url, d.failures, d.messages])).toEqual([
      [`${receiver.url}/down`, 4, 3],
      [`${receiver.url}/flaky`, 1, 1],
    ]);
    expect(failingDestinations[0]!.last).toMatchObject({ status: 500, body: Buffer.from(DOWN) });
  });

  it("links a DLQ retry both ways, lists it, and stops counting the original as failing", async () => {
    failing.add("/retried");
    const original = await publish("/retried");
    await settled(original, "FAILED");
    const [entry] = (await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}/retried`)}`)).json()).messages;
    const before = await (await dispatch.api(`/v2/messages/${original}`)).json();
    failing.delete("/retried");
    const retried = await dispatch.api(`/v2/dlq/retry/${entry.dlqId}`, { method: "POST" });
    expect(retried.status).toBe(201);
    const { messageId: retry } = await retried.json();
    await settled(retry, "DELIVERED");

    const sql = dispatch.service.sql;
    expect(await retryLinks(sql, (await findMessage(sql, original))!)).toEqual({
      retriedAs: { id: retry, state: "DELIVERED", dlqId: null },
      retryOf: null,
    });
    expect(await retryLinks(sql, (await findMessage(sql, retry))!)).toEqual({
      retriedAs: null,
      retryOf: { id: original, state: "FAILED", dlqId: null },
    });
    const [latest] = await recentRetries(sql, DEFAULT_PROJECT, 10);
    expect(latest).toMatchObject({ original, url: `${receiver.url}/retried`, retry: { id: retry, state: "DELIVERED" } });
    expect((await readTotals(sql, DEFAULT_PROJECT)).retried).toBe(1);
    const { items } = await listMessages(sql, { ...NO_FILTER, states: ["FAILED"] });
    expect(items.find((item) => item.id === original)!.retriedAs).toEqual({ id: retry, state: "DELIVERED" });

    // The API answers as before: the original unchanged, its entry gone.
    expect(await (await dispatch.api(`/v2/messages/${original}`)).json()).toEqual(before);
    expect((await dispatch.api(`/v2/dlq/${entry.dlqId}`)).status).toBe(404);
  });

  it("links each message a bulk DLQ retry publishes to its original", async () => {
    failing.add("/bulk");
    const originals = [await publish("/bulk"), await publish("/bulk")];
    for (const id of originals) await settled(id, "FAILED");
    const response = await dispatch.api(`/v2/dlq/retry?url=${encodeURIComponent(`${receiver.url}/bulk`)}`, { method: "POST" });
    expect(response.status).toBe(201);
    const retries: string[] = (await response.json()).responses.map((r: { messageId: string }) => r.messageId);
    const sql = dispatch.service.sql;
    const linked = await Promise.all(originals.map(async (id) => (await retryLinks(sql, (await findMessage(sql, id))!)).retriedAs!.id));
    expect(linked.sort()).toEqual([...retries].sort());
    for (const retry of retries) {
      expect(originals).toContain((await retryLinks(sql, (await findMessage(sql, retry))!)).retryOf!.id);
    }
  });

  it("stops listing a destination once a delivery follows its latest error (a DLQ retry delivered), and lists it again when it fails again", async () => {
    failing.add("/recovers");
    const url = `${receiver.url}/recovers`;
    const listed = async () => (await failingNow(dispatch.service.sql, DEFAULT_PROJECT, 50)).find((destination) => destination.url === url);
    const onOverview = async () => {
      const { cookie } = await dashboardSession(dispatch.baseUrl);
      return (await (await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie } })).text()).includes(`data-failing="${url}"`);
    };
    const failed = await publish("/recovers");
    await settled(failed, "FAILED");
    expect(await listed()).toMatchObject({ failures: 1, messages: 1 });
    expect(await onOverview()).toBe(true);

    failing.delete("/recovers");
    const [entry] = (await (await dispatch.api(`/v2/dlq?url=${encodeURIComponent(url)}`)).json()).messages;
    const retried = await dispatch.api(`/v2/dlq/retry/${entry.dlqId}`, { method: "POST" });
    expect(retried.status).toBe(201);
    await settled((await retried.json()).messageId, "DELIVERED");
    expect(await listed()).toBeUndefined();
    expect(await onOverview()).toBe(false);
    // A destination that still fails stays listed.
    expect((await failingNow(dispatch.service.sql, DEFAULT_PROJECT, 50)).map((destination) => destination.url)).toContain(`${receiver.url}/down`);

    failing.add("/recovers");
    const again = await publish("/recovers");
    await settled(again, "FAILED");
    expect(await listed()).toMatchObject({ failures: 2, messages: 2 });
    // A new message to it is delivered: it works again.
    failing.delete("/recovers");
    await settled(await publish("/recovers"), "DELIVERED");
    expect(await listed()).toBeUndefined();
  });

  it("does not list a destination whose failed attempt was retried and delivered", async () => {
    const once = await publish("/once", 1);
    await settled(once, "DELIVERED");
    expect((await (await dispatch.api(`/v2/messages/${once}`)).json()).retried).toBe(1);
    expect((await failingNow(dispatch.service.sql, DEFAULT_PROJECT, 50)).map((destination) => destination.url)).not.toContain(`${receiver.url}/once`);
  });
});
