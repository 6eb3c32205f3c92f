/**
 * The logs: `GET /v2/events` (what the SDKs call) and `GET /v2/logs` (what
 * the docs show), the same page under `events` or `logs` (docs/hosted-api.md §9,
 * §16 #3).
 */
import { redactorFor } from "../redactor-for";
import { type Context, Hono } from "hono";
import { canonicalHeaders } from "../../domain/headers/names";
import { EVENT_STATES } from "../../db/vocabulary";
import { type LogEvent, type LogQuery, listLogs, logStates } from "../../domain/messages/logs";
import type { Redactor } from "../../domain/messages/redaction";
import type { AppDeps } from "../deps";
import { type Operation, operation } from "../openapi/operation";
import { MESSAGE_FILTERS, ORDER, paging, TIME_RANGE } from "../openapi/parameters";
import { LogEntrySchema, pageOf } from "../openapi/schemas";
import { integerParam, listParam, messageFilterParams, orderParam, type Params, singleParam, timeRangeParams } from "../query";
import { flowControlFields } from "../serialize";

/** Page size: 100 by default; up to 1000 as older docs and the TS SDK allow (docs/hosted-api.md §16 #23). */
const DEFAULT_COUNT = 100;
const MAX_COUNT = 1000;

const PARAMETERS = {
  ...paging(DEFAULT_COUNT, MAX_COUNT),
  ...ORDER,
  messageIds: "Message ids. Several: repeat the parameter or join them with commas.",
  state: `States: ${EVENT_STATES.join(", ")}, or IN_PROGRESS for an unfinished delivery. Several: repeat the parameter or join them with commas.`,
  ...MESSAGE_FILTERS,
  ...TIME_RANGE,
};

/** The log under `key`: both paths take the same parameters. */
const logOperation = (key: "events" | "logs", summary: string) =>
  operation({
    summary,
    description: "What happened to messages, newest first unless `order` says otherwise: one entry per state change and attempt.",
    tag: "Logs",
    access: "read",
    query: PARAMETERS,
    responses: { 200: { description: "A page of the log.", json: pageOf(key, LogEntrySchema) } },
  });
const EVENTS = logOperation("events", "List the log (what the SDKs call)");
const LOGS = logOperation("logs", "List the log");

/** Routes of the logs. */
export function logRoutes(deps: AppDeps) {
  const page = async (c: Context, key: "events" | "logs", op: Operation<undefined>) => {
    const { events, cursor } = await listLogs(deps.sql, logQuery(c.get("project"), op.query(c)));
    return c.json({ [key]: events.map((event) => logJson(event, redactorFor(c, deps.redactor))), ...(cursor !== null && { cursor }) });
  };
  return new Hono()
    .get("/events", EVENTS.describe, (c) => page(c, "events", EVENTS))
    .get("/logs", LOGS.describe, (c) => page(c, "logs", LOGS));
}

function logQuery(project: string, params: Params): LogQuery {
  const states = listParam(params, ["state"]);
  return {
    project,
    messageIds: listParam(params, ["messageIds"]),
    states: states === null ? null : logStates(states),
    filter: messageFilterParams(params),
    range: timeRangeParams(params),
    cursor: singleParam(params, "cursor"),
    count: integerParam(params, "count", 1, MAX_COUNT, DEFAULT_COUNT),
    order: orderParam(params, "latestFirst"),
  };
}

/**
 * A log entry; bodies are always base64 here (docs/hosted-api.md §1.5), a hidden
 * body too: the base64 of its `REDACTED:<hash>` form (domain/messages/redaction.ts).
 */
function logJson(e: LogEvent, redactor: Redactor) {
  const m = redactor.message(e.message);
  const header = { ...m.headers, ...(m.contentType !== null && { "Content-Type": m.contentType }) };
  const responseHeader = e.responseHeaders === null ? null : canonicalHeaders(e.responseHeaders);
  return {
    time: e.at.getTime(),
    state: e.state,
    messageId: m.id,
    url: m.url,
    ...(m.topicName !== null && { topicName: m.topicName }),
    ...(m.endpointName !== null && { endpointName: m.endpointName }),
    ...(m.queueName !== null && { queueName: m.queueName }),
    ...(m.scheduleId !== null && { scheduleId: m.scheduleId }),
    ...(m.api !== null && { api: m.api }),
    header: canonicalHeaders(header),
    body: m.body.toString("base64"),
    ...(e.error !== null && { error: e.error }),
    ...(e.nextDeliveryAt !== null && { nextDeliveryTime: e.nextDeliveryAt.getTime() }),
    ...(e.responseStatus !== null && { responseStatus: e.responseStatus }),
    ...(e.responseBody !== null && { responseBody: e.responseBody.toString("base64") }),
    // Docs say responseHeaders, the Python SDK reads responseHeader (docs/hosted-api.md §16 #12).
    ...(responseHeader !== null && { responseHeaders: responseHeader, responseHeader }),
    ...(m.timeoutMs !== null && { timeout: m.timeoutMs }),
    method: m.method,
    ...(m.callback !== null && { callback: m.callback, callbackHeaders: canonicalHeaders(m.callbackHeaders ?? {}) }),
    ...(m.failureCallback !== null && {
      failureCallback: m.failureCallback,
      failureCallbackHeaders: canonicalHeaders(m.failureCallbackHeaders ?? {}),
    }),
    maxRetries: m.maxRetries,
    // Docs say retryDelayExpression, the Python SDK reads retryDelayExpr (docs/hosted-api.md §16 #13).
    ...(m.retryDelayExpression !== null && {
      retryDelayExpression: m.retryDelayExpression,
      retryDelayExpr: m.retryDelayExpression,
    }),
    ...flowControlFields(m.flowControlKey, m.flowControlValue),
    ...(m.labels && m.labels.length > 0 && { label: m.labels[0], labels: m.labels }),
  };
}
