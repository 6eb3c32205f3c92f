/**
 * Schemas of what several operations answer, for the API document: the
 * serializers of the routes (e.g. `messageJson`) shape these objects. Loose
 * objects: the fields named are the ones clients rely on; optional ones
 * appear when set.
 */
import * as v from "valibot";
import { MESSAGE_STATES } from "../../domain/messages/message";

const time = (what: string) => v.pipe(v.number(), v.description(`${what}, Unix milliseconds.`));
const headerMap = v.pipe(v.record(v.string(), v.array(v.string())), v.description("Header names in canonical form, each with its values."));

/** The Message object (`GET /v2/messages/{messageId}`). */
export const MessageSchema = v.looseObject({
  messageId: v.string(),
  url: v.string(),
  state: v.picklist(MESSAGE_STATES),
  method: v.string(),
  header: headerMap,
  body: v.optional(v.pipe(v.string(), v.description("The body when it is UTF-8 text."))),
  bodyBase64: v.optional(v.pipe(v.string(), v.description("The body in base64 when it is not UTF-8 text."))),
  maxRetries: v.number(),
  retried: v.number(),
  notBefore: time("Not delivered before"),
  nextDeliveryTime: time("Next attempt"),
  createdAt: time("Published"),
  topicName: v.optional(v.string()),
  queueName: v.optional(v.string()),
  scheduleId: v.optional(v.string()),
  callback: v.optional(v.string()),
  failureCallback: v.optional(v.string()),
  deduplicationId: v.optional(v.string()),
  flowControlKey: v.optional(v.string()),
  labels: v.optional(v.array(v.string())),
});

/** A DLQ entry: the Message object with the last answer. */
export const DlqMessageSchema = v.looseObject({
  ...MessageSchema.entries,
  dlqId: v.string(),
  responseStatus: v.pipe(v.number(), v.description("Status of the last answer; 0 when there was none.")),
  responseHeader: v.optional(headerMap),
  responseBody: v.optional(v.string()),
  responseBodyBase64: v.optional(v.string()),
  error: v.optional(v.string()),
});

/** What a publish answers per message. */
export const PublishResultSchema = v.looseObject({
  messageId: v.string(),
  url: v.optional(v.string()),
  deduplicated: v.optional(v.boolean()),
});

/** A page of a list: its items under `key` and the cursor of the next page, absent on the last. */
export function pageOf(key: string, item: v.GenericSchema) {
  return v.object({ [key]: v.array(item), cursor: v.optional(v.pipe(v.string(), v.description("The next page's cursor."))) });
}
