/**
 * The dead letter queue (docs/hosted-api.md §8): `GET /v2/dlq`, `GET|DELETE
 * /v2/dlq/{dlqId}`, bulk `DELETE /v2/dlq`, `POST /v2/dlq/retry[/{dlqId}]`.
 */
import { Hono } from "hono";
import { type DlqEntry, type DlqPage, type DlqSelection, deleteDlqEntries, deleteDlqEntry, findDlqEntry, listDlq, retryDlqEntries, retryDlqEntry } from "../../domain/dlq/dlq";
import { badRequest } from "../../domain/errors";
import { canonicalHeaders } from "../../domain/headers/names";
import type { PublishResult } from "../../domain/messages/new-message";
import type { Redactor } from "../../domain/messages/redaction";
import { messageSettings } from "../../domain/publish/options";
import type { AppDeps } from "../deps";
import {
  bulkParams,
  integerParam,
  listParam,
  messageFilterParams,
  orderParam,
  type Params,
  queryParams,
  singleParam,
  timeRangeParams,
} from "../query";
import { requestHeaders } from "../request";
import { bodyFields } from "../serialize";
import { messageJson } from "./messages";

// host and path are not DLQ filters (docs/hosted-api.md §8), so they are refused like any unknown parameter.
const PARAMETERS = [
  "dlqIds", "cursor", "count", "order", "messageId", "url", "topicName", "scheduleId", "queueName", "label",
  "flowControlKey", "callerIp", "callerIP", "responseStatus", "fromDate", "toDate",
];

/** Page size: default and maximum (docs/hosted-api.md §8). */
const MAX_COUNT = 100;

/** Routes of the DLQ resource. */
export function dlqRoutes(deps: AppDeps) {
  const { sql } = deps;
  const settings = messageSettings(deps.config);
  return new Hono()
    .get("/", async (c) => {
      const params = queryParams(c, PARAMETERS);
      const { items, cursor } = await listDlq(sql, selection(params), page(params));
      return c.json({ messages: items.map((entry) => dlqMessageJson(entry, deps.redactor)), ...(cursor !== null && { cursor }) });
    })
    .delete("/", async (c) => {
      const params = await bulkParams(c, PARAMETERS);
      const [picked, paged] = [selection(params), page(params)];
      const { items, cursor } = await sql.begin((tx) => deleteDlqEntries(tx, picked, paged));
      return c.json({ deleted: items.length, ...(cursor !== null && { cursor }) });
    })
    .post("/retry", async (c) => {
      const params = await bulkParams(c, PARAMETERS);
      const [picked, paged, overrides] = [selection(params), page(params), requestHeaders(c)];
      const { items, cursor } = await sql.begin((tx) => retryDlqEntries(tx, picked, paged, overrides, settings));
      // The bulk retry answers an empty cursor, not none, when done (docs/hosted-api.md §8).
      return c.json({ responses: items.map(retryJson), cursor: cursor ?? "" }, 201);
    })
    .post("/retry/:dlqId", async (c) => {
      const overrides = requestHeaders(c);
      const result = await sql.begin((tx) => retryDlqEntry(tx, c.req.param("dlqId"), overrides, settings));
      return c.json(retryJson(result), 201);
    })
    .get("/:dlqId", async (c) => c.json(dlqMessageJson(await findDlqEntry(sql, c.req.param("dlqId")), deps.redactor)))
    .delete("/:dlqId", async (c) => {
      await sql.begin((tx) => deleteDlqEntry(tx, c.req.param("dlqId")));
      return c.json({ deleted: 1 });
    });
}

/** DLQ ids (the filters are then ignored), else the filters. */
function selection(params: Params): DlqSelection {
  const dlqIds = listParam(params, ["dlqIds"]);
  if (dlqIds !== null) return { dlqIds };
  return {
    filter: messageFilterParams(params),
    responseStatus: listParam(params, ["responseStatus"])?.map(statusCode) ?? null,
    range: timeRangeParams(params),
  };
}

function statusCode(text: string): number {
  if (!/^\d{3}$/.test(text)) throw badRequest(`responseStatus must be an HTTP status code, got "${text}"`);
  return Number(text);
}

function page(params: Params): DlqPage {
  return {
    cursor: singleParam(params, "cursor"),
    count: integerParam(params, "count", 1, MAX_COUNT, MAX_COUNT),
    order: orderParam(params, "earliestFirst"),
  };
}

/** A DLQ entry as the API shows it: the Message object plus the last response. */
function dlqMessageJson(entry: DlqEntry, redactor: Redactor) {
  const response = entry.responseBody === null ? null : bodyFields(entry.responseBody);
  return {
    ...messageJson(entry.message, redactor),
    dlqId: entry.dlqId,
    // 0 when the last attempt got no response; the Python SDK requires the field.
    responseStatus: entry.responseStatus ?? 0,
    ...(entry.responseHeaders !== null && { responseHeader: canonicalHeaders(entry.responseHeaders) }),
    ...(response !== null && ("body" in response ? { responseBody: response.body } : { responseBodyBase64: response.bodyBase64 })),
    ...(entry.error !== null && { error: entry.error }),
  };
}

function retryJson(result: PublishResult) {
  return { messageId: result.messageId, ...(result.deduplicated && { deduplicated: true }) };
}
