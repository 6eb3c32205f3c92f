/**
 * `GET /v2/messages/{id}`, `DELETE /v2/messages/{id}` and the bulk cancel
 * `DELETE /v2/messages` (docs/hosted-api.md §4), and the Dispatch extension
 * `POST /v2/messages/{id}/retry-now`.
 */
import { redactorFor } from "../redactor-for";
import { Hono } from "hono";
import * as v from "valibot";
import { AppError } from "../../domain/errors";
import { canonicalHeaders } from "../../domain/headers/names";
import { cancelMessages, cancelSelected, type CancelSelection } from "../../domain/messages/cancel";
import type { StoredMessage } from "../../domain/messages/message";
import type { Redactor } from "../../domain/messages/redaction";
import { findOwnMessage } from "../../domain/messages/message";
import { retryNow } from "../../domain/messages/retry-now";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { messageFiltersExcept, TIME_RANGE } from "../openapi/parameters";
import { MessageSchema } from "../openapi/schemas";
import { integerParam, listParam, messageFilterParams, type Params, timeRangeParams } from "../query";
import { bodyFields, flowControlFields } from "../serialize";

const ID = { id: "The message's id." };
const CANCELLED = { description: "How many messages were cancelled.", json: v.object({ cancelled: v.number() }) };

const GET = operation({
  summary: "Get a message",
  description: "What the message asks to hide (Redact-Fields) is shown redacted.",
  tag: "Messages",
  access: "read",
  path: ID,
  responses: { 200: { description: "The message.", json: MessageSchema } },
  errors: [404],
});
const CANCEL = operation({
  summary: "Cancel a message",
  description: "A pending message is not delivered; one being delivered is cancelled once its attempt ends. A finished one stays as it is.",
  tag: "Messages",
  access: "full-token",
  path: ID,
  responses: { 200: CANCELLED },
  errors: [404],
});
const RETRY_NOW = operation({
  summary: "Retry a message now",
  description:
    "A Dispatch extension, not in the hosted API: a message waiting out its retry backoff (state RETRY, no attempt under way) " +
    "is attempted at once instead of at its next delivery time. Its retries left are unchanged. " +
    "A message that is not waiting on a backoff answers 409, saying what it does instead.",
  tag: "Messages",
  access: "full-token",
  path: ID,
  responses: {
    200: {
      description: "The message is due now.",
      json: v.object({ messageId: v.string(), dueAt: v.pipe(v.number(), v.description("When it is due (now), Unix milliseconds.")) }),
    },
  },
  errors: [404, 409],
});
const CANCEL_MANY = operation({
  summary: "Cancel messages",
  description:
    "The messages given by id, else every pending message matching every filter given (values of one filter are alternatives), " +
    "as they were when the request came: no filter cancels every pending message.",
  tag: "Messages",
  access: "full-token",
  query: {
    messageIds: "Message ids; the filters are then ignored. Several: repeat the parameter or join them with commas.",
    count: { type: "integer", description: "Accepted (1 to 500) and ignored, as the hosted service does: every match is cancelled." },
    ...TIME_RANGE,
    ...messageFiltersExcept("messageId"),
  },
  body: { filters: "The parameters as a JSON object, as older SDKs send them (`{\"messageIds\": [...]}`)." },
  responses: { 200: CANCELLED },
});

/** Routes of the message resource. */
export function messageRoutes(deps: AppDeps) {
  return new Hono()
    .get("/:id", GET.describe, async (c) => {
      const message = await findOwnMessage(deps.sql, c.get("project"), c.req.param("id"));
      if (!message) throw new AppError(404, `message ${c.req.param("id")} not found`);
      return c.json(messageJson(message, redactorFor(c, deps.redactor)));
    })
    .delete("/:id", CANCEL.describe, async (c) => {
      const id = c.req.param("id");
      const cancelled = await deps.sql.begin(async (tx) => {
        if (!(await findOwnMessage(tx, c.get("project"), id))) throw new AppError(404, `message ${id} not found`);
        return cancelMessages(tx, c.get("project"), [id]);
      });
      return c.json({ cancelled });
    })
    .post("/:id/retry-now", RETRY_NOW.describe, async (c) => {
      const id = c.req.param("id");
      const result = await deps.sql.begin((tx) => retryNow(tx, c.get("project"), id));
      if (result.kind === "not-found") throw new AppError(404, `message ${c.req.param("id")} not found`);
      if (result.kind === "not-in-backoff") throw new AppError(409, `message ${c.req.param("id")} is not waiting on a retry backoff: ${result.why}`);
      return c.json({ messageId: result.messageId, dueAt: result.dueAt.getTime() });
    })
    .delete("/", CANCEL_MANY.describe, async (c) => {
      const selection = cancelSelection(c.get("project"), await CANCEL_MANY.bulk(c));
      return c.json({ cancelled: await cancelSelected(deps.sql, selection) });
    });
}

/** Message ids (filters are then ignored), else the filters; `count` is checked and ignored, as the hosted service ignores it. */
function cancelSelection(project: string, params: Params): CancelSelection {
  const messageIds = listParam(params, ["messageIds"]);
  if (messageIds !== null) return { project, messageIds };
  integerParam(params, "count", 1, 500, 100);
  return { project, filter: messageFilterParams(params), range: timeRangeParams(params) };
}

/** The Message object of the API, with what the message asks to hide hidden (domain/messages/redaction.ts). */
export function messageJson(stored: StoredMessage, redactor: Redactor) {
  const m = redactor.message(stored);
  const header = { ...m.headers, ...(m.contentType !== null && { "Content-Type": m.contentType }) };
  return {
    messageId: m.id,
    url: m.url,
    state: m.state,
    ...(m.topicName !== null && { topicName: m.topicName }),
    ...(m.endpointName !== null && { endpointName: m.endpointName }),
    ...(m.api !== null && { api: m.api }),
    ...(m.queueName !== null && { queueName: m.queueName }),
    method: m.method,
    header: canonicalHeaders(header),
    ...bodyFields(m.body),
    maxRetries: m.maxRetries,
    retried: m.retried,
    ...(m.retryDelayExpression !== null && { retryDelayExpression: m.retryDelayExpression }),
    notBefore: m.notBefore.getTime(),
    nextDeliveryTime: m.nextDeliveryAt.getTime(),
    createdAt: m.createdAt.getTime(),
    ...(m.timeoutMs !== null && { timeout: m.timeoutMs }),
    ...(m.callback !== null && { callback: m.callback, callbackHeader: canonicalHeaders(m.callbackHeaders ?? {}) }),
    ...(m.failureCallback !== null && {
      failureCallback: m.failureCallback,
      failureCallbackHeader: canonicalHeaders(m.failureCallbackHeaders ?? {}),
    }),
    ...(m.deduplicationId !== null && { deduplicationId: m.deduplicationId }),
    ...(m.scheduleId !== null && { scheduleId: m.scheduleId }),
    ...flowControlFields(m.flowControlKey, m.flowControlValue),
    // The hosted service's name, which the Python and Go clients read (docs/hosted-api.md §16 #11).
    ...(m.callerIp !== null && { callerIP: m.callerIp }),
    ...(m.labels && m.labels.length > 0 && { label: m.labels[0], labels: m.labels }),
  };
}
