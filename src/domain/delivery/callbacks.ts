/**
 * Callbacks and failure callbacks (docs/interface.md "Events"): new messages,
 * signed, retried and configured by the `Callback-*` / `Failure-Callback-*`
 * publish headers, whose body describes the source message and the response.
 */
import { withoutHopHeaders } from "../headers/hop-headers";
import { canonicalHeaders, canonicalHeaderStrings } from "../headers/names";
import type { StoredMessage } from "../messages/message";
import type { NewMessage } from "../messages/new-message";
import { callbackFields } from "../messages/redaction";
import { parsePublishOptions, type PublishLimits } from "../publish/options";
import { buildMessage } from "../publish/prepare";
import type { Attempt } from "./attempt";

/** The JSON body of a callback or failure callback. */
export function callbackBody(message: StoredMessage, attempt: Attempt, dlqId: string | null): Record<string, unknown> {
  const response = attempt.kind === "response" ? attempt : null;
  const body: Record<string, unknown> = {
    status: response?.status ?? 0,
    header: canonicalHeaders(response?.headers ?? {}),
    body: (response?.body ?? Buffer.alloc(0)).toString("base64"),
    retried: message.retried,
    maxRetries: message.maxRetries,
    ...(dlqId !== null && { dlqId }),
    sourceMessageId: message.id,
    ...(message.topicName !== null && { topicName: message.topicName }),
    ...(message.endpointName !== null && { endpointName: message.endpointName }),
    url: message.url,
    method: message.method,
    sourceHeader: sourceHeader(message),
    sourceBody: message.body.toString("base64"),
    notBefore: String(message.notBefore.getTime()),
    createdAt: String(message.createdAt.getTime()),
    ...(message.scheduleId !== null && { scheduleId: message.scheduleId }),
    ...(message.callerIp !== null && { callerIP: message.callerIp }),
  };
  return body;
}

/** Headers of the source message as sent to its destination, one string per name. */
function sourceHeader(message: StoredMessage): Record<string, string> {
  const headers = withoutHopHeaders(message.headers);
  if (message.contentType !== null) headers["Content-Type"] = message.contentType;
  return canonicalHeaderStrings(headers);
}

/** Which callback a finished attempt calls. */
export type CallbackKind = "callback" | "failure_callback";

/**
 * The callback message of `kind` for `message`, or null when none was set.
 * Its options come from the headers stored at publish time (already
 * validated then), in the source message's dialect.
 */
export function buildCallbackMessage(
  kind: CallbackKind,
  message: StoredMessage,
  body: Record<string, unknown>,
  limits: PublishLimits,
): NewMessage | null {
  const url = kind === "callback" ? message.callback : message.failureCallback;
  const headers = kind === "callback" ? message.callbackHeaders : message.failureCallbackHeaders;
  if (url === null) return null;
  const lower = Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  lower["content-type"] = "application/json";
  const options = parsePublishOptions(lower, message.dialect, limits);
  const callback = buildMessage(options, { url }, Buffer.from(JSON.stringify(body)), {
    project: message.project,
    origin: kind,
    sourceMessageId: message.id,
    callerIp: message.callerIp,
    // The callback's attempts join its source's trace.
    traceparent: message.traceparent,
  });
  // The envelope carries the source's body and headers as delivered; the API hides what the source hides.
  callback.redactFields = callbackFields(message.redactFields, callback.redactFields);
  return callback;
}

/**
 * Whether a finished attempt calls the callback. Compat dialect: after every
 * attempt, as the hosted service does and the workflow SDK relies on
 * (`retried`/`maxRetries` tell a retrying call from a final one). Native
 * dialect: once, when the delivery finishes (delivered or finally failed).
 */
export function callbackDue(message: StoredMessage, final: boolean): boolean {
  // A workflow's third-party call calls back once, finally (docs/workflow-protocol.md §6.2 item 4).
  const everyAttempt = message.dialect === "upstash" && message.workflowCallType !== "toCallback";
  return message.callback !== null && (final || everyAttempt);
}
