/**
 * The logs, `GET /v2/events` and `GET /v2/logs`: every state change of every
 * message with the message's details, newest first by default, filtered, and
 * paged with a cursor; and the SDK's `logs()`/`events()`.
 */
import { Client } from "@upstash/qstash";
import { beforeAll, describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { TEST_TOKEN, useDispatch } from "./support/service";

const dispatch = useDispatch();
// "/flaky" fails its first attempt with a 503, everything else succeeds.
let flakyCalls = 0;
const receiver = useReceiver((request) =>
  request.path === "/flaky" && flakyCalls++ === 0
    ? { status: 503, headers: { "X-Why": "warming up" }, body: "try later" }
    : { status: 200, body: "ok" },
);
let client: Client;

beforeAll(async () => {
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});

async function publish(path: string, headers: Record<string, string> = {}, body = "hello"): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()).messageId;
}

const events = async (query: string) => {
  const response = await dispatch.api(`/v2/events?${query}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
};
const statesOf = async (query: string) => (await events(query)).events.map((e: { state: string }) => e.state);

/** Waits until the message's latest logged state is `state`. */
async function settled(messageId: string, state: string) {
  await poll(async () => (await statesOf(`messageIds=${messageId}&count=1`))[0] === state, `${messageId} to reach ${state}`);
}

describe("log entries", () => {
  it("a delivered message logs CREATED, ACTIVE and DELIVERED, newest first, with its details", async () => {
    const id = await publish(
      "/delivered",
      { "Content-Type": "text/plain", "Svc-Forward-X-Tenant": "acme", "Svc-Label": "logged", "Svc-Retries": "2" },
      "hello logs",
    );
    await settled(id, "DELIVERED");
    const { events: entries, ...rest } = await events(`messageIds=${id}`);
    expect(rest).toEqual({});
    expect(entries.map((e: { state: string }) => e.state)).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
    const [delivered, , created] = entries;
    expect(created).toMatchObject({
      messageId: id,
      url: `${receiver.url}/delivered`,
      method: "POST",
      header: { "Content-Type": ["text/plain"], "X-Tenant": ["acme"] },
      body: Buffer.from("hello logs").toString("base64"),
      maxRetries: 2,
      label: "logged",
      labels: ["logged"],
      nextDeliveryTime: expect.any(Number),
    });
    expect(delivered).toMatchObject({ state: "DELIVERED", responseStatus: 200 });
    const times = entries.map((e: { time: number }) => e.time);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("an error carries the response; a retry carries the next delivery time", async () => {
    const id = await publish("/flaky", { "Upstash-Retries": "1", "Upstash-Retry-Delay": "1000 * (retried + 1)" });
    await settled(id, "DELIVERED");
    const { events: entries } = await events(`messageIds=${id}&order=earliestFirst`);
    expect(entries.map((e: { state: string }) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED"]);
    const [, , error, retry] = entries;
    expect(error).toMatchObject({
      responseStatus: 503,
      responseBody: Buffer.from("try later").toString("base64"),
      responseHeaders: expect.objectContaining({ "X-Why": ["warming up"] }),
      responseHeader: expect.objectContaining({ "X-Why": ["warming up"] }),
      error: expect.stringContaining("503"),
      retryDelayExpression: "1000 * (retried + 1)",
      retryDelayExpr: "1000 * (retried + 1)",
    });
    expect(retry.nextDeliveryTime).toBeGreaterThanOrEqual(retry.time);
  });

  it("GET /v2/logs serves the same page under logs", async () => {
    const id = await publish("/both-paths");
    await settled(id, "DELIVERED");
    const response = await dispatch.api(`/v2/logs?messageIds=${id}`);
    const { logs } = await response.json();
    expect(logs).toEqual((await events(`messageIds=${id}`)).events);
  });
});

describe("filtering and paging", () => {
  it("pages with cursor and count: 25 entries by 10 are 10, 10 and 5, the last page without cursor", async () => {
    const ids = [];
    for (let i = 0; i < 25; i++) ids.push(await publish(`/paged-${i}`, { "Svc-Delay": "1h", "Svc-Label": "paged" }));
    for (const order of ["latestFirst", "earliestFirst"]) {
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await events(`label=paged&count=10&order=${order}${cursor ? `&cursor=${cursor}` : ""}`);
        pages.push(page.events.map((e: { messageId: string }) => e.messageId));
        cursor = page.cursor;
      } while (cursor);
      expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
      expect(pages.flat()).toEqual(order === "earliestFirst" ? ids : [...ids].reverse());
    }
  });

  it("filters on state (with IN_PROGRESS and CANCELLED), url, queue, label, URL group, caller and time", async () => {
    const since = Date.now();
    const pending = await publish("/filters-pending", { "Svc-Delay": "1h", "Svc-Label": "filters" });
    const queued = await (
      await dispatch.api(`/v2/enqueue/log-queue/${receiver.url}/filters-queued`, {
        method: "POST",
        headers: { "Svc-Label": "filters" },
      })
    ).json();
    await settled(queued.messageId, "DELIVERED");
    await dispatch.api(`/v2/messages/${pending}`, { method: "DELETE" });
    const until = Date.now();

    expect(await statesOf("label=filters&state=CANCELLED")).toEqual(["CANCELED"]);
    expect(await statesOf("label=filters&state=CANCELED,CANCEL_REQUESTED")).toEqual(["CANCELED", "CANCEL_REQUESTED"]);
    expect(await statesOf("label=filters&state=IN_PROGRESS")).toEqual(["ACTIVE"]);
    expect(await statesOf("label=filters&queueName=log-queue")).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
    expect(await statesOf(`url=${encodeURIComponent(`${receiver.url}/filters-pending`)}`)).toEqual([
      "CANCELED",
      "CANCEL_REQUESTED",
      "CREATED",
    ]);
    expect(await statesOf(`messageId=${pending}&state=CREATED`)).toEqual(["CREATED"]);
    expect((await events(`label=filters&fromDate=${since}&toDate=${until}`)).events).toHaveLength(6);
    expect((await events(`label=filters&toDate=${since - 1}`)).events).toEqual([]);
    const { callerIP } = await (await dispatch.api(`/v2/messages/${pending}`)).json();
    expect(await statesOf(`label=filters&callerIp=${encodeURIComponent(callerIP)}&state=CREATED`)).toEqual(["CREATED", "CREATED"]);
    for (const query of ["topicName=nope", "scheduleId=nope", "flowControlKey=k", "callerIp=203.0.113.9", "queueName=nope"]) {
      expect((await events(`label=filters&${query}`)).events, query).toEqual([]);
    }
    // With messageIds, the other filters do not apply.
    expect(await statesOf(`messageIds=${pending}&label=other&state=DELIVERED`)).toEqual(["CANCELED", "CANCEL_REQUESTED", "CREATED"]);
  });

  it("filters on the URL group, and shows the group and endpoint of fan-out messages", async () => {
    await dispatch.api("/v2/topics/log-group/endpoints", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/group-endpoint`, name: "first" }] }),
    });
    const [result] = await (
      await dispatch.api("/v2/publish/log-group", { method: "POST", headers: { "Svc-Delay": "1h" }, body: "x" })
    ).json();
    const { events: entries } = await events("topicName=log-group");
    expect(entries).toEqual([
      expect.objectContaining({ messageId: result.messageId, state: "CREATED", topicName: "log-group", endpointName: "first" }),
    ]);
  });

  it("accepts up to 1000 per page and refuses bad parameters with a 400", async () => {
    expect((await dispatch.api("/v2/events?count=1000")).status).toBe(200);
    for (const query of ["count=0", "count=1001", "state=BOGUS", "cursor=abc", "order=newest", "fromDate=soon", "labels=x"]) {
      const response = await dispatch.api(`/v2/events?${query}`);
      expect(response.status, query).toBe(400);
      expect((await response.json()).error).toEqual(expect.any(String));
    }
  });
});

describe("the SDK's logs", () => {
  it("logs() and events() filter and page like the API", async () => {
    const target = `${receiver.url}/sdk-logs`;
    const first = await client.publish({ url: target, body: "a", delay: 3600, label: "sdk-logs" });
    const second = await client.publish({ url: target, body: "b", delay: 3600, label: "sdk-logs" });

    const byIds = await client.logs({ messageIds: [first.messageId] });
    expect(byIds.logs.map((l) => [l.messageId, l.state])).toEqual([[first.messageId, "CREATED"]]);
    expect(byIds.cursor).toBeUndefined();

    const page = await client.logs({ filter: { label: "sdk-logs", state: "CREATED", url: target }, count: 1 });
    expect(page.logs.map((l) => l.messageId)).toEqual([second.messageId]);
    expect(page.cursor).toEqual(expect.any(String));
    const next = await client.events({ filter: { label: "sdk-logs" }, count: 1, cursor: page.cursor });
    expect(next.events.map((e) => e.messageId)).toEqual([first.messageId]);
    expect(next.cursor).toBeUndefined();
    expect(Buffer.from(next.events[0]!.body!, "base64").toString()).toBe("a");
  });
});
