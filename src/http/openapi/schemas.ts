/**
 * Schemas of what several operations answer, for the API document: the
 * serializers of the routes (e.g. `messageJson`) shape these objects, and
 * every field they may hold is named here (optional ones appear when set).
 * In the test suite every answer is checked against them strictly
 * (answer-check.ts): a field missing here fails the test that met it.
 */
import * as v from "valibot";
import { EVENT_STATES, MESSAGE_STATES } from "../../db/vocabulary";

const time = (what: string) => v.pipe(v.number(), v.description(`${what}, Unix milliseconds.`));
export const headerMap = v.pipe(v.record(v.string(), v.array(v.string())), v.description("Header names in canonical form, each with its values."));
const text = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));

/** Flow control on a message, log entry, DLQ entry or schedule (docs/hosted-api.md §11). */
export const FLOW_CONTROL_FIELDS = {
  flowControlKey: v.optional(v.string()),
  parallelism: v.optional(v.pipe(v.number(), v.description("Most deliveries of the key at once; absent when unlimited."))),
  rate: v.optional(v.pipe(v.number(), v.description("Most deliveries of the key started per period; absent when unlimited."))),
  period: v.optional(v.pipe(v.number(), v.description("The rate's period in seconds (1 by default), whenever there is a key."))),
};

/** Labels: the first (as older clients read it) and all. */
export const LABEL_FIELDS = {
  label: text("The first label (older clients read this one)."),
  labels: v.optional(v.array(v.string())),
};

/** The Message object (`GET /v2/messages/{messageId}`). */
export const MessageSchema = v.object({
  messageId: v.string(),
  url: v.string(),
  state: v.picklist(MESSAGE_STATES),
  topicName: v.optional(v.string()),
  endpointName: text("The URL group endpoint's name."),
  api: text("The API destination (`llm` for `api/llm`)."),
  queueName: v.optional(v.string()),
  method: v.string(),
  header: headerMap,
  body: text("The body when it is UTF-8 text."),
  bodyBase64: text("The body in base64 when it is not UTF-8 text."),
  maxRetries: v.number(),
  retried: v.number(),
  retryDelayExpression: v.optional(v.string()),
  notBefore: time("Not delivered before"),
  nextDeliveryTime: time("Next attempt"),
  createdAt: time("Published"),
  timeout: v.optional(v.pipe(v.number(), v.description("Per-attempt timeout, milliseconds."))),
  callback: v.optional(v.string()),
  callbackHeader: v.optional(headerMap),
  failureCallback: v.optional(v.string()),
  failureCallbackHeader: v.optional(headerMap),
  deduplicationId: v.optional(v.string()),
  scheduleId: v.optional(v.string()),
  ...FLOW_CONTROL_FIELDS,
  callerIP: text("The publishing client's address."),
  ...LABEL_FIELDS,
});

/** A DLQ entry: the Message object with the last answer. */
export const DlqMessageSchema = v.object({
  ...MessageSchema.entries,
  dlqId: v.string(),
  responseStatus: v.pipe(v.number(), v.description("Status of the last answer; 0 when there was none.")),
  responseHeader: v.optional(headerMap),
  responseBody: v.optional(v.string()),
  responseBodyBase64: v.optional(v.string()),
  error: v.optional(v.string()),
});

/** An entry of the message log (`GET /v2/logs`, `GET /v2/events`). */
export const LogEntrySchema = v.object({
  time: time("When"),
  state: v.picklist(EVENT_STATES),
  messageId: v.string(),
  url: v.string(),
  topicName: v.optional(v.string()),
  endpointName: v.optional(v.string()),
  queueName: v.optional(v.string()),
  scheduleId: v.optional(v.string()),
  api: v.optional(v.string()),
  header: headerMap,
  body: v.pipe(v.string(), v.description("Base64.")),
  error: v.optional(v.string()),
  nextDeliveryTime: v.optional(time("Next attempt")),
  responseStatus: v.optional(v.number()),
  responseBody: v.optional(v.pipe(v.string(), v.description("Base64."))),
  responseHeaders: v.optional(headerMap),
  responseHeader: v.optional(v.pipe(headerMap, v.description("Alias of responseHeaders (the Python client reads this one)."))),
  timeout: v.optional(v.pipe(v.number(), v.description("Per-attempt timeout, milliseconds."))),
  method: v.string(),
  callback: v.optional(v.string()),
  callbackHeaders: v.optional(headerMap),
  failureCallback: v.optional(v.string()),
  failureCallbackHeaders: v.optional(headerMap),
  maxRetries: v.number(),
  retryDelayExpression: v.optional(v.string()),
  retryDelayExpr: v.optional(v.pipe(v.string(), v.description("Alias of retryDelayExpression (the Python client reads this one)."))),
  ...FLOW_CONTROL_FIELDS,
  ...LABEL_FIELDS,
});

/** What a publish answers per message. */
export const PublishResultSchema = v.object({
  messageId: v.string(),
  url: v.optional(v.string()),
  deduplicated: v.optional(v.boolean()),
});

/** A page of a list: its items under `key` and the cursor of the next page, absent on the last. */
export function pageOf(key: string, item: v.GenericSchema) {
  return v.object({ [key]: v.array(item), cursor: v.optional(v.pipe(v.string(), v.description("The next page's cursor."))) });
}
