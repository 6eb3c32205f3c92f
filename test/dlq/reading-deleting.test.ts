/**
 * The dead letter queue, read and deleted: entries hold the failed message and
 * its last response; they are listed a page at a time with filters, read, and
 * deleted one by one or in bulk. And the SDK's DLQ API (list, page, delete,
 * retry), here rather than with the retries because its delete({all: true})
 * must find more than one page of entries: the ones the reading tests leave.
 */
import { Client } from "@upstash/qstash";
import { beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { dlqApi, failingUnlessHealed } from "./fixtures";

const dispatch = useDispatch();
/** Paths the receiver answers with 200; every other path fails (404 under /missing, else 500). */
const healed = new Set<string>();
const receiver = useReceiver(failingUnlessHealed(healed));
const { failed, get, send, requestsTo } = dlqApi(dispatch, receiver);
let client: Client;

beforeAll(async () => {
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});

const ids = (body: { messages: { dlqId: string }[] }) => body.messages.map((m) => m.dlqId);

describe("reading the DLQ", () => {
  it("an entry is the failed message plus the last response", async () => {
    const { messageId, dlqId } = await failed("/shape", {
      "Content-Type": "application/json",
      "Svc-Method": "PUT",
      "Svc-Forward-X-Tenant": "acme",
      "Svc-Label": "shape",
    });
    const { status, body } = await get(`/v2/dlq/${dlqId}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      dlqId,
      messageId,
      url: `${receiver.url}/shape`,
      method: "PUT",
      state: "FAILED",
      header: { "Content-Type": ["application/json"], "X-Tenant": ["acme"] },
      body: "body of /shape",
      maxRetries: 0,
      label: "shape",
      labels: ["shape"],
      responseStatus: 500,
      responseHeader: { "X-Reason": ["broken"] },
      responseBody: "it broke",
    });
    expect(body.createdAt).toEqual(expect.any(Number));
    expect(body.callerIP).toEqual(expect.any(String));
    const listed = await get(`/v2/dlq?messageId=${messageId}`);
    expect(listed.body).toEqual({ messages: [body] });
  });

  it("a response body that is not UTF-8 is shown as responseBodyBase64", async () => {
    const { dlqId } = await failed("/binary");
    const { body } = await get(`/v2/dlq/${dlqId}`);
    expect(body.responseBodyBase64).toBe(Buffer.from([0xff, 0xfe, 0x00]).toString("base64"));
    expect(body).not.toHaveProperty("responseBody");
  });

  it("answers 404 for an unknown entry", async () => {
    expect(await get("/v2/dlq/dlq_unknown")).toEqual({ status: 404, body: { error: "DLQ entry dlq_unknown not found" } });
  });

  it("pages with cursor and count: 25 entries by 10 are 10, 10 and 5, the last page without cursor", async () => {
    const published = await Promise.all(Array.from({ length: 25 }, (_, i) => failed(`/page-${i}`, { "Svc-Label": "paged" })));
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const { body } = await get(`/v2/dlq?label=paged&count=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      pages.push(ids(body));
      cursor = body.cursor;
      if (pages.length < 3) expect(cursor).toEqual(expect.any(String));
      else expect(body).not.toHaveProperty("cursor");
    } while (cursor);
    expect(pages.map((page) => page.length)).toEqual([10, 10, 5]);
    expect(new Set(pages.flat())).toEqual(new Set(published.map((p) => p.dlqId)));

    const latest = await get("/v2/dlq?label=paged&order=latestFirst");
    expect(ids(latest.body)).toEqual(pages.flat().reverse());
    expect(latest.body).not.toHaveProperty("cursor");
    const earliest = await get("/v2/dlq?label=paged&order=earliestFirst&count=100");
    expect(ids(earliest.body)).toEqual(pages.flat());
  });

  it("filters on url, queue, label, response status, ids and time; unknown values match nothing", async () => {
    const since = Date.now();
    const a = await failed("/filter-a", { "Svc-Label": "fa" }, "dlq-queue");
    const b = await failed("/missing-b", { "Svc-Label": "fb" });
    const until = Date.now();
    const list = async (query: string) => ids((await get(`/v2/dlq?${query}`)).body);
    expect(await list(`url=${encodeURIComponent(`${receiver.url}/filter-a`)}`)).toEqual([a.dlqId]);
    expect(await list("queueName=dlq-queue")).toEqual([a.dlqId]);
    expect(await list("label=fa,fb")).toEqual([a.dlqId, b.dlqId]);
    expect(await list("label=fa&label=fb&responseStatus=404")).toEqual([b.dlqId]);
    expect(await list(`messageId=${a.messageId}`)).toEqual([a.dlqId]);
    expect(await list(`dlqIds=${b.dlqId}&dlqIds=${a.dlqId}`)).toEqual([a.dlqId, b.dlqId]);
    expect(await list(`fromDate=${since}&toDate=${until}`)).toEqual([a.dlqId, b.dlqId]);
    expect(await list(`label=fa&toDate=${since - 1}`)).toEqual([]);
    for (const query of ["queueName=nope", "topicName=nope", "scheduleId=nope", "flowControlKey=k", "callerIp=203.0.113.9"]) {
      expect(await list(`label=fa&${query}`), query).toEqual([]);
    }
    const { callerIP } = (await get(`/v2/dlq/${a.dlqId}`)).body;
    expect(await list(`label=fa&callerIP=${encodeURIComponent(callerIP)}`)).toEqual([a.dlqId]);
  });

  it("refuses bad parameters with a 400", async () => {
    for (const query of ["count=0", "count=101", "order=sideways", "cursor=nonsense", "host=example.com", "responseStatus=abc", "fromDate=x"]) {
      const { status, body } = await get(`/v2/dlq?${query}`);
      expect(status, query).toBe(400);
      expect(body.error).toEqual(expect.any(String));
    }
  });
});

describe("deleting DLQ entries", () => {
  it("deletes one entry; deleting it again is a 404", async () => {
    const { dlqId } = await failed("/delete-one");
    expect(await send("DELETE", `/v2/dlq/${dlqId}`)).toEqual({ status: 200, body: { deleted: 1 } });
    expect((await send("DELETE", `/v2/dlq/${dlqId}`)).status).toBe(404);
    expect((await get(`/v2/dlq/${dlqId}`)).status).toBe(404);
  });

  it("deletes by repeated dlqIds or by the legacy JSON body", async () => {
    const [a, b, c] = await Promise.all(["/bulk-a", "/bulk-b", "/bulk-c"].map((path) => failed(path)));
    expect(await send("DELETE", `/v2/dlq?dlqIds=${a!.dlqId}&dlqIds=${b!.dlqId}`)).toEqual({ status: 200, body: { deleted: 2 } });
    const legacy = await send("DELETE", "/v2/dlq", { body: JSON.stringify({ dlqIds: [c!.dlqId, "dlq_unknown"] }) });
    expect(legacy).toEqual({ status: 200, body: { deleted: 1 } });
    expect((await get(`/v2/dlq?dlqIds=${a!.dlqId},${b!.dlqId},${c!.dlqId}`)).body).toEqual({ messages: [] });
  });

  it("deletes a filtered selection a page at a time, following the cursor", async () => {
    await Promise.all(Array.from({ length: 5 }, (_, i) => failed(`/bulk-page-${i}`, { "Svc-Label": "bulk-page" })));
    const keep = await failed("/bulk-keep", { "Svc-Label": "bulk-keep" });
    const first = await send("DELETE", "/v2/dlq?label=bulk-page&count=2");
    expect(first.body).toEqual({ deleted: 2, cursor: expect.any(String) });
    const second = await send("DELETE", `/v2/dlq?label=bulk-page&count=2&cursor=${encodeURIComponent(first.body.cursor)}`);
    expect(second.body).toEqual({ deleted: 2, cursor: expect.any(String) });
    const last = await send("DELETE", `/v2/dlq?label=bulk-page&count=2&cursor=${encodeURIComponent(second.body.cursor)}`);
    expect(last.body).toEqual({ deleted: 1 });
    expect((await get("/v2/dlq?label=bulk-page")).body).toEqual({ messages: [] });
    expect(ids((await get("/v2/dlq?label=bulk-keep")).body)).toEqual([keep.dlqId]);
  });

  it("a bad bulk delete is a 400 that deletes nothing", async () => {
    const { dlqId } = await failed("/bulk-bad", { "Svc-Label": "bulk-bad" });
    for (const [query, body] of [["?label=bulk-bad&count=500"], ["?path=/bulk-bad"], ["", JSON.stringify({ dlqIds: [] })]]) {
      expect((await send("DELETE", `/v2/dlq${query}`, { body })).status, `${query} ${body}`).toBe(400);
    }
    expect((await get(`/v2/dlq/${dlqId}`)).status).toBe(200);
  });
});

describe("the SDK's DLQ API", () => {
  it("lists, pages, deletes and retries", async () => {
    const entries = await Promise.all([0, 1, 2, 3, 4].map((i) => failed(`/sdk-${i}`, { "Upstash-Label": "sdk" })));
    const all = entries.map((e) => e.dlqId);

    const firstPage = await client.dlq.listMessages({ filter: { label: "sdk" }, count: 3 });
    expect(firstPage.messages).toHaveLength(3);
    expect(firstPage.cursor).toEqual(expect.any(String));
    const secondPage = await client.dlq.listMessages({ filter: { label: "sdk" }, count: 3, cursor: firstPage.cursor });
    expect(secondPage.cursor).toBeUndefined();
    expect(new Set([...firstPage.messages, ...secondPage.messages].map((m) => m.dlqId))).toEqual(new Set(all));
    const [shown] = (await client.dlq.listMessages({ dlqIds: [all[0]!] })).messages;
    expect(shown).toMatchObject({ dlqId: all[0], messageId: entries[0]!.messageId, responseStatus: 500, url: `${receiver.url}/sdk-0` });

    expect(await client.dlq.delete(all[0]!)).toEqual({ deleted: 1 });
    await expect(client.dlq.delete(all[0]!)).rejects.toMatchObject({ status: 404 });
    expect(await client.dlq.deleteMany({ dlqIds: [all[1]!] })).toEqual({ deleted: 1 });
    expect(await client.dlq.delete({ filter: { url: `${receiver.url}/sdk-2`, label: "sdk" } })).toEqual({ deleted: 1 });

    healed.add("/sdk-3");
    const one = await client.dlq.retry(all[3]!);
    expect(one).toEqual({ responses: [{ messageId: expect.any(String) }] });
    await poll(async () => requestsTo("/sdk-3").length === 2, "the SDK retry");

    healed.add("/sdk-4");
    expect(await client.dlq.retry({ filter: { label: "sdk" } })).toEqual({ responses: [{ messageId: expect.any(String) }] });
    await poll(async () => requestsTo("/sdk-4").length === 2, "the SDK bulk retry");
    expect((await client.dlq.listMessages({ filter: { label: "sdk" } })).messages).toEqual([]);
  });

  it("delete({all: true}) empties the DLQ page by page", async () => {
    await failed("/sdk-all");
    let cursor: string | undefined;
    let deleted = 0;
    do {
      const result = await client.dlq.delete({ all: true, count: 7, cursor });
      deleted += result.deleted;
      cursor = result.cursor;
    } while (cursor);
    expect(deleted).toBeGreaterThan(7);
    expect((await client.dlq.listMessages()).messages).toEqual([]);
  });
});
