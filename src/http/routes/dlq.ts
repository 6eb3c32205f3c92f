/**
 * The dead letter queue (docs/hosted-api.md §8): `GET /v2/dlq`, `GET|DELETE
 * /v2/dlq/{dlqId}`, bulk `DELETE /v2/dlq`, `POST /v2/dlq/retry[/{dlqId}]`.
 */
import { redactorFor } from "../redactor-for";
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { type DlqEntry, type DlqPage, type DlqSelection, deleteDlqEntries, deleteDlqEntry, findDlqEntry, listDlq, retryDlqEntries, retryDlqEntry } from "../../domain/dlq/dlq";
import { badRequest } from "../../domain/errors";
import { canonicalHeaders } from "../../domain/headers/names";
import type { PublishResult } from "../../domain/messages/new-message";
import type { Redactor } from "../../domain/messages/redaction";
import { messageSettings } from "../../domain/publish/options";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { messageFiltersExcept, ORDER, paging, PUBLISH_HEADER_NOTE, publishHeaders, TIME_RANGE } from "../openapi/parameters";
import { DlqMessageSchema, pageOf } from "../openapi/schemas";
import { integerParam, listParam, messageFilterParams, orderParam, type Params, singleParam, statusCodesParam, timeRangeParams } from "../query";
import { requestHeaders } from "../request";
import { bodyFields } from "../serialize";
import { messageJson } from "./messages";

/** Page size: default and maximum (docs/hosted-api.md §8). */
const MAX_COUNT = 100;

// host and path are not DLQ filters (docs/hosted-api.md §8), so they are refused like any unknown parameter.
const PARAMETERS = {
  dlqIds: "DLQ ids; the filters are then ignored. Several: repeat the parameter or join them with commas.",
  ...paging(MAX_COUNT, MAX_COUNT),
  ...ORDER,
  ...messageFiltersExcept("host", "path"),
  responseStatus: "Status codes of the last answer. Several: repeat the parameter or join them with commas.",
  ...TIME_RANGE,
};
const DLQ_ID = { dlqId: "The entry's id." };
const FILTER_BODY = { filters: "The parameters as a JSON object, as older SDKs send them (`{\"dlqIds\": [...]}`)." };
const RETRIED = v.looseObject({ messageId: v.string(), deduplicated: v.optional(v.boolean()) });
const OVERRIDES = {
  description: `The retry is published again with the entry's headers; publish headers given here replace theirs.\n${PUBLISH_HEADER_NOTE}`,
  headers: publishHeaders(),
};

const LIST = operation({
  summary: "List the DLQ",
  description: "Messages whose every attempt failed, with their last answer, oldest first unless `order` says otherwise.",
  tag: "DLQ",
  access: "read",
  query: { ...PARAMETERS, source: "`workflow` lists the workflow DLQ instead (what the workflow SDK calls)." },
  responses: { 200: { description: "A page of entries.", json: pageOf("messages", DlqMessageSchema) } },
});
const DELETE_MANY = operation({
  summary: "Delete DLQ entries",
  description: "The entries given by id, else a page of those matching the filters; the answer's cursor continues.",
  tag: "DLQ",
  access: "full-token",
  query: PARAMETERS,
  body: FILTER_BODY,
  responses: { 200: { description: "How many were deleted.", json: v.object({ deleted: v.number(), cursor: v.optional(v.string()) }) } },
});
const RETRY_MANY = operation({
  summary: "Retry DLQ entries",
  ...OVERRIDES,
  tag: "DLQ",
  access: "full-token",
  query: PARAMETERS,
  body: FILTER_BODY,
  responses: { 201: { description: "The new messages; an empty cursor when done.", json: v.object({ responses: v.array(RETRIED), cursor: v.string() }) } },
  errors: [412],
});
const RETRY = operation({
  summary: "Retry a DLQ entry",
  ...OVERRIDES,
  tag: "DLQ",
  access: "full-token",
  path: DLQ_ID,
  responses: { 201: { description: "The new message.", json: RETRIED } },
  errors: [404, 412],
});
const GET = operation({
  summary: "Get a DLQ entry",
  tag: "DLQ",
  access: "read",
  path: DLQ_ID,
  responses: { 200: { description: "The entry.", json: DlqMessageSchema } },
  errors: [404],
});
const DELETE = operation({
  summary: "Delete a DLQ entry",
  tag: "DLQ",
  access: "full-token",
  path: DLQ_ID,
  responses: { 200: { description: "Deleted.", json: v.object({ deleted: v.literal(1) }) } },
  errors: [404],
});

/** Routes of the DLQ resource. */
export function dlqRoutes(deps: AppDeps) {
  const { sql } = deps;
  const settings = messageSettings(deps.config);
  return new Hono()
    .get("/", LIST.describe, async (c) => {
      const params = LIST.query(c);
      const { items, cursor } = await listDlq(sql, selection(c, params), page(params));
      return c.json({ messages: items.map((entry) => dlqMessageJson(entry, redactorFor(c, deps.redactor))), ...(cursor !== null && { cursor }) });
    })
    .delete("/", DELETE_MANY.describe, async (c) => {
      const params = await DELETE_MANY.bulk(c);
      const [picked, paged] = [selection(c, params), page(params)];
      const { items, cursor } = await sql.begin((tx) => deleteDlqEntries(tx, picked, paged));
      return c.json({ deleted: items.length, ...(cursor !== null && { cursor }) });
    })
    .post("/retry", RETRY_MANY.describe, async (c) => {
      const params = await RETRY_MANY.bulk(c);
      const [picked, paged, overrides] = [selection(c, params), page(params), requestHeaders(c, deps.config.defaultDialect)];
      const { items, cursor } = await sql.begin((tx) => retryDlqEntries(tx, picked, paged, overrides, settings));
      // The bulk retry answers an empty cursor, not none, when done (docs/hosted-api.md §8).
      return c.json({ responses: items.map(retryJson), cursor: cursor ?? "" }, 201);
    })
    .post("/retry/:dlqId", RETRY.describe, async (c) => {
      const overrides = requestHeaders(c, deps.config.defaultDialect);
      const result = await sql.begin((tx) => retryDlqEntry(tx, c.get("project"), c.req.param("dlqId"), overrides, settings));
      return c.json(retryJson(result), 201);
    })
    .get("/:dlqId", GET.describe, async (c) => c.json(dlqMessageJson(await findDlqEntry(sql, c.get("project"), c.req.param("dlqId")), redactorFor(c, deps.redactor))))
    .delete("/:dlqId", DELETE.describe, async (c) => {
      await sql.begin((tx) => deleteDlqEntry(tx, c.get("project"), c.req.param("dlqId")));
      return c.json({ deleted: 1 });
    });
}

/** The token's project's entries: by DLQ id (the filters are then ignored), else by the filters. */
function selection(c: Context, params: Params): DlqSelection {
  const project = c.get("project");
  const dlqIds = listParam(params, ["dlqIds"]);
  if (dlqIds !== null) return { project, dlqIds };
  return {
    project,
    filter: messageFilterParams(params),
    responseStatus: statusCodesParam(params),
    range: timeRangeParams(params),
  };
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
