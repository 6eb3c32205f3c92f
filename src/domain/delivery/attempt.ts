/**
 * One delivery attempt: the outgoing request (docs/hosted-api.md §3.1), what came
 * back, and the decision it leads to. Outcomes are values; only
 * infrastructure faults throw (docs/decisions.md §1).
 */
import type { WorkflowCallType } from "../../db/vocabulary";
import type { HttpClient } from "../../outbound/http-client";
import { tooLargeText } from "../errors";
import { ISSUER, PREFIX, USER_AGENT } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import { withoutHopHeaders } from "../headers/hop-headers";
import type { StoredMessage } from "../messages/message";
import { retryDelayMs } from "./retry-policy";
import { signRequest, type SigningKeys } from "./signing";

/** What one attempt produced: a response (any status) or an error before one. */
export type Attempt =
  | { kind: "response"; status: number; headers: Record<string, string[]>; body: Buffer; startedAt: Date; durationMs: number }
  | {
      kind: "error";
      error: string;
      /** The network error's code (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, ...), when it had one. */
      code: string | null;
      /** Not sent at all: its destination's circuit gave up (domain/destinations/circuit.ts). */
      notSent?: true;
      startedAt: Date;
      durationMs: number;
    };

/** What happens to the message after an attempt. */
export type Outcome =
  | { kind: "delivered" }
  | { kind: "retry"; delayMs: number; error: string }
  | { kind: "failed"; error: string }
  /** A failed probe of an open circuit: the message goes back to its destination's line, spending no retry. */
  | { kind: "held"; error: string };

/**
 * The headers Dispatch sends to the destination, in the message's dialect.
 * `credentials` (the configured key of an API destination) never override a
 * header the publisher forwarded. Forwarded hop headers (RFC 9110 §7.6.1,
 * headers/hop-headers.ts) are dropped here, at every send, so that messages stored
 * with them before they were dropped at publish deliver too; the HTTP client
 * then frames the request itself.
 */
export function outgoingHeaders(
  message: StoredMessage,
  keys: SigningKeys,
  credentials: Record<string, string> = {},
): Record<string, string> {
  const p = PREFIX[message.dialect];
  const headers: Record<string, string> = {
    ...credentials,
    ...withoutHopHeaders(message.headers),
    "User-Agent": USER_AGENT[message.dialect],
  };
  if (message.contentType !== null) headers["Content-Type"] = message.contentType;
  headers[`${p}Message-Id`] = message.id;
  headers[`${p}Retried`] = String(message.retried);
  headers[`${p}Signature`] = signRequest(keys.current, {
    issuer: ISSUER[message.dialect],
    url: message.url,
    body: sentBody(message) ?? "",
  });
  if (message.topicName !== null) headers[`${p}Topic-Name`] = message.topicName;
  if (message.scheduleId !== null) headers[`${p}Schedule-Id`] = message.scheduleId;
  if (message.callerIp !== null) headers[`${p}Caller-Ip`] = message.callerIp;
  return headers;
}

/** The body the destination gets (none for GET and HEAD); the signature covers exactly this. */
function sentBody(message: StoredMessage): Buffer | null {
  return message.method === "GET" || message.method === "HEAD" ? null : message.body;
}

/** Sends the message once; network errors, timeouts and refusals become error attempts. */
export async function attemptDelivery(
  client: HttpClient,
  message: StoredMessage,
  keys: SigningKeys,
  timeoutMs: number,
  credentials?: Record<string, string>,
): Promise<Attempt> {
  const startedAt = new Date();
  try {
    const response = await client.send({
      url: message.url,
      method: message.method,
      headers: outgoingHeaders(message, keys, credentials),
      body: sentBody(message),
      timeoutMs,
    });
    const durationMs = Date.now() - startedAt.getTime();
    // A workflow call hands the response on as data: cut off, it would be corrupt (logged responses may be cut).
    if (response.truncated && message.workflowCallType === "toCallback") {
      return { kind: "error", error: tooLargeText("the response body", client.maxResponseBytes), code: null, startedAt, durationMs };
    }
    const { status, headers, body } = response;
    return { kind: "response", status, headers, body, startedAt, durationMs };
  } catch (error) {
    const durationMs = Date.now() - startedAt.getTime();
    return { kind: "error", error: (error as Error).message, code: errorCode(error), startedAt, durationMs };
  }
}

/** The code of a network error, or of the error it wraps (a timeout wraps undici's). */
function errorCode(error: unknown): string | null {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (typeof e.code === "string") return e.code;
  }
  return null;
}

/** Decides delivered / retry / failed from an attempt (docs/hosted-api.md §3.2). */
export function decide(message: StoredMessage, attempt: Attempt, retryDelayScale: number): Outcome {
  if (attempt.kind === "response" && attempt.status >= 200 && attempt.status < 300) return { kind: "delivered" };
  const error = attempt.kind === "error" ? attempt.error : `destination responded with status ${attempt.status}`;
  if (attempt.kind === "response" && isNonRetryable(attempt, message.dialect)) {
    return { kind: "failed", error: `${error} and a non-retryable error header` };
  }
  if (message.retried >= message.maxRetries) return { kind: "failed", error };
  const delayMs = retryDelayMs({
    dialect: message.dialect,
    retried: message.retried,
    retryDelayExpression: message.retryDelayExpression,
    responseHeaders: attempt.kind === "response" ? attempt.headers : null,
    scale: retryDelayScale,
    now: new Date(),
  });
  return { kind: "retry", delayMs, error };
}

/** A 489 carrying `<prefix>NonRetryable-Error: true` fails the message at once. */
function isNonRetryable(attempt: Extract<Attempt, { kind: "response" }>, dialect: Dialect): boolean {
  if (attempt.status !== 489) return false;
  const header = attempt.headers[`${PREFIX[dialect].toLowerCase()}nonretryable-error`];
  return header?.some((value) => value.trim().toLowerCase() === "true") ?? false;
}
