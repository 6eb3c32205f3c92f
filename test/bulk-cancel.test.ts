/**
 * Bulk cancel, `DELETE /v2/messages`: by message ids, by filters (OR within a
 * field, AND across fields), or everything pending; as query parameters or as
 * the legacy JSON body; and through the official SDK.
 */
import { Client } from "@upstash/qstash";
import { beforeAll, describe, expect, it } from "vitest";
import { engineCycle, expectUntouched } from "./support/engine";
import { sleep, useReceiver } from "./support/receiver";
import { countMessages, eventStates } from "./support/rows";
import { TEST_TOKEN, useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver();
let client: Client;

beforeAll(async () => {
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});

/** Publishes a message due in an hour (or as `headers` say) to `path` on the receiver; returns its id. */
async function publish(path: string, headers: Record<string, string> = {}, queue?: string): Promise<string> {
  const route = queue === undefined ? "publish" : `enqueue/${queue}`;
  const response = await dispatch.api(`/v2/${route}/${receiver.url}${path}`, {
    method: "POST",
    headers: { "Svc-Delay": "1h", ...headers },
    body: "payload",
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()).messageId;
}

const cancel = async (query: string, init: RequestInit = {}) => {
  const response = await dispatch.api(`/v2/messages${query}`, { method: "DELETE", ...init });
  return { status: response.status, body: await response.json() };
};

const stateOf = async (id: string) => (await (await dispatch.api(`/v2/messages/${id}`)).json()).state as string;
const statesOf = (ids: string[]) => Promise.all(ids.map(stateOf));
const url = (path: string) => encodeURIComponent(`${receiver.url}${path}`);

describe("cancelling by message ids", () => {
  it("cancels the repeated messageIds, answers how many, and logs each cancel", async () => {
    const [a, b, c] = [await publish("/ids"), await publish("/ids"), await publish("/ids")];
    expect(await cancel(`?messageIds=${a}&messageIds=${b}`)).toEqual({ status: 200, body: { cancelled: 2 } });
    expect(await statesOf([a!, b!, c!])).toEqual(["CANCELED", "CANCELED", "CREATED"]);
    expect(await eventStates(dispatch, a!)).toEqual(["CREATED", "CANCEL_REQUESTED", "CANCELED"]);
    // Already cancelled or unknown ids count for nothing.
    expect(await cancel(`?messageIds=${a},msg_unknown`)).toEqual({ status: 200, body: { cancelled: 0 } });
  });

  it("a cancelled message is never delivered", async () => {
    const id = await publish("/soon", { "Svc-Delay": "1s" });
    expect((await cancel(`?messageIds=${id}`)).body).toEqual({ cancelled: 1 });
    // A marker due after it has been delivered: the cancelled message came due and was not.
    await engineCycle(dispatch, "1s");
    expect(receiver.requests.filter((r) => r.path === "/soon")).toHaveLength(0);
    await expectUntouched(dispatch, [id]);
  });

  it("takes the legacy JSON body {messageIds: [...]}", async () => {
    const [a, b] = [await publish("/legacy"), await publish("/legacy")];
    const response = await cancel("", { body: JSON.stringify({ messageIds: [a] }), headers: { "Content-Type": "application/json" } });
    expect(response.body).toEqual({ cancelled: 1 });
    expect(await statesOf([a!, b!])).toEqual(["CANCELED", "CREATED"]);
  });
});

describe("cancelling by filters", () => {
  it("ORs the values of a field, repeated or comma-joined, and ANDs the fields", async () => {
    const a = await publish("/f", { "Svc-Label": "l1" }, "q1");
    const b = await publish("/f", { "Svc-Label": "l2" }, "q1");
    const c = await publish("/f", { "Svc-Label": "l1" }, "q2");
    const d = await publish("/f", { "Svc-Label": "l3" }, "q1");
    expect((await cancel("?label=l1,l2&queueName=q1")).body).toEqual({ cancelled: 2 });
    expect(await statesOf([a, b, c, d])).toEqual(["CANCELED", "CANCELED", "CREATED", "CREATED"]);
    expect((await cancel("?label=l1&label=l3")).body).toEqual({ cancelled: 2 });
    expect(await statesOf([c, d])).toEqual(["CANCELED", "CANCELED"]);
  });

  it("matches whole destination URLs, commas included", async () => {
    const withComma = await publish("/a,b");
    const plain = await publish("/a");
    expect((await cancel(`?url=${url("/a,b")}`)).body).toEqual({ cancelled: 1 });
    expect(await statesOf([withComma, plain])).toEqual(["CANCELED", "CREATED"]);
    expect((await cancel(`?url=${url("/b")}&url=${url("/a")}`)).body).toEqual({ cancelled: 1 });
    expect(await stateOf(plain)).toBe("CANCELED");
  });

  it("filters on the host and the path of the destination", async () => {
    const a = await publish("/hp/one?x=1");
    const b = await publish("/hp/two");
    expect((await cancel("?host=nowhere.example&path=/hp/one")).body).toEqual({ cancelled: 0 });
    expect((await cancel("?host=127.0.0.1&path=/hp/one")).body).toEqual({ cancelled: 1 });
    expect(await statesOf([a, b])).toEqual(["CANCELED", "CREATED"]);
  });

  it("filters on the URL group", async () => {
    const added = await dispatch.api("/v2/topics/cancel-group/endpoints", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/group-1` }, { url: `${receiver.url}/group-2` }] }),
    });
    expect(added.status).toBe(200);
    const fanOut = await (
      await dispatch.api("/v2/publish/cancel-group", { method: "POST", headers: { "Svc-Delay": "1h" }, body: "x" })
    ).json();
    const other = await publish("/not-in-group");
    expect((await cancel("?topicName=cancel-group")).body).toEqual({ cancelled: 2 });
    expect(await statesOf(fanOut.map((r: { messageId: string }) => r.messageId))).toEqual(["CANCELED", "CANCELED"]);
    expect(await stateOf(other)).toBe("CREATED");
  });

  it("filters on the publisher's IP, spelled callerIp or callerIP", async () => {
    const id = await publish("/caller");
    const { callerIP } = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(callerIP).toBeTruthy();
    expect((await cancel(`?callerIp=203.0.113.9&url=${url("/caller")}`)).body).toEqual({ cancelled: 0 });
    expect((await cancel(`?callerIP=${encodeURIComponent(callerIP)}&url=${url("/caller")}`)).body).toEqual({ cancelled: 1 });
  });

  it("filters on the creation time, fromDate and toDate inclusive", async () => {
    const first = await publish("/dated");
    await sleep(20);
    const second = await publish("/dated");
    const created = async (id: string) => (await (await dispatch.api(`/v2/messages/${id}`)).json()).createdAt as number;
    const [t1, t2] = [await created(first), await created(second)];
    expect((await cancel(`?url=${url("/dated")}&fromDate=${t1 + 1}&toDate=${t2 - 1}`)).body).toEqual({ cancelled: 0 });
    expect((await cancel(`?url=${url("/dated")}&toDate=${t1}`)).body).toEqual({ cancelled: 1 });
    expect(await statesOf([first, second])).toEqual(["CANCELED", "CREATED"]);
    expect((await cancel(`?url=${url("/dated")}&fromDate=${t2}`)).body).toEqual({ cancelled: 1 });
  });

  it("cancels every match, whatever count says (the hosted service ignores it; the Python and Go clients never ask twice)", async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await publish("/counted", { "Svc-Label": "counted" }));
    expect((await cancel("?label=counted&count=3")).body).toEqual({ cancelled: 4 });
    expect(await statesOf(ids)).toEqual(["CANCELED", "CANCELED", "CANCELED", "CANCELED"]);
    expect((await cancel("?label=counted&count=501")).status).toBe(400);
  });

  it("cancels more than one batch of matches in one call", async () => {
    for (let start = 0; start < 1100; start += 100) await Promise.all(Array.from({ length: 100 }, () => publish("/many", { "Svc-Label": "many" })));
    expect((await cancel("?label=many")).body).toEqual({ cancelled: 1100 });
  });

  it("takes filters in the legacy JSON body", async () => {
    const a = await publish("/body-filter", { "Svc-Label": "from-body" }, "body-queue");
    const b = await publish("/body-filter", { "Svc-Label": "from-body" });
    const body = JSON.stringify({ label: ["from-body"], queueName: "body-queue" });
    expect((await cancel("", { body, headers: { "Content-Type": "application/json" } })).body).toEqual({ cancelled: 1 });
    expect(await statesOf([a, b])).toEqual(["CANCELED", "CREATED"]);
  });

  it("values that name nothing match nothing", async () => {
    const sentinel = await publish("/sentinel");
    for (const query of ["?queueName=nope", "?topicName=nope", "?scheduleId=scd_nope", "?flowControlKey=k", "?label=nope"]) {
      expect((await cancel(query)).body, query).toEqual({ cancelled: 0 });
    }
    expect(await stateOf(sentinel)).toBe("CREATED");
  });

  it("refuses bad input with a 400 and cancels nothing", async () => {
    const sentinel = await publish("/untouched");
    const bad: [string, RequestInit?][] = [
      ["?count=0"],
      ["?count=501"],
      ["?count=ten"],
      ["?queuename=typo"],
      ["?label="],
      ["?fromDate=yesterday"],
      ["?fromDate=20&toDate=10"],
      ["", { body: "not json" }],
      ["", { body: JSON.stringify({ messageIds: [] }) }],
      ["", { body: JSON.stringify({ messageIds: [{ id: 1 }] }) }],
      ["", { body: JSON.stringify({ everything: true }) }],
    ];
    for (const [query, init] of bad) {
      const response = await cancel(query, init);
      expect(response.status, `${query} ${init?.body}`).toBe(400);
      expect(response.body.error).toEqual(expect.any(String));
    }
    expect(await stateOf(sentinel)).toBe("CREATED");
  });
});

describe("the SDK's bulk cancel", () => {
  it("cancel(ids), deleteMany(ids) and cancel({filter}) cancel what they name", async () => {
    const target = `${receiver.url}/sdk`;
    const publishOne = async (label?: string) =>
      (await client.publish({ url: target, body: "x", delay: 3600, ...(label && { label }) })).messageId;
    const [a, b, c, d, e] = [await publishOne(), await publishOne(), await publishOne(), await publishOne("sdk-l"), await publishOne()];
    expect(await client.messages.cancel([a, b])).toEqual({ cancelled: 2 });
    expect(await client.messages.deleteMany([c])).toBe(1);
    expect(await client.messages.cancel({ filter: { label: "sdk-l", url: [target, "https://other.example"] } })).toEqual({
      cancelled: 1,
    });
    expect(await statesOf([a, b, c, d, e])).toEqual(["CANCELED", "CANCELED", "CANCELED", "CANCELED", "CREATED"]);
  });

  it("cancel with nothing named cancels every pending message", async () => {
    await publish("/all-1");
    await publish("/all-2", {}, "all-queue");
    const pending = () => countMessages(dispatch, { states: ["CREATED", "RETRY"] });
    const before = await pending();
    expect(before).toBeGreaterThan(2);
    expect((await cancel("?count=1")).body).toEqual({ cancelled: before });
    await publish("/all-2");
    // The trailing-slash form is the bulk route too (docs/hosted-api.md §1.2).
    expect((await cancel("/")).body).toEqual({ cancelled: 1 });
    expect(await pending()).toBe(0);
    await publish("/all-3");
    expect(await client.messages.deleteAll()).toBe(1);
    expect(await client.messages.cancel({ all: true })).toEqual({ cancelled: 0 });
  });
});
