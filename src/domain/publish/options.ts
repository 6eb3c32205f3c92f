/**
 * Publish headers → validated options (docs/interface.md "POST /v2/publish",
 * docs/hosted-api.md §2.2). Both dialects read the same names after their prefix;
 * every invalid value is a 400 naming the header, and nothing is stored.
 */
import { parseDuration } from "../duration";
import { type FlowControl, parseFlowControl } from "../flow-control/limits";
import { OPTION_HEADERS, type OptionHeader } from "./option-headers";
import { badRequest, overLimit } from "../errors";
import { PREFIX } from "../headers/dialect";
import { DIALECTS, type Dialect } from "../../db/vocabulary";
import { withoutHopHeaders } from "../headers/hop-headers";
import { checkHeaderFields } from "../headers/field-syntax";
import { canonicalHeaderName } from "../headers/names";
import { readWorkflowBinding, type WorkflowBinding } from "../headers/workflow";
import { parseHttpUrl } from "../http-url";
import { parseRedactFields, type RedactFields } from "../messages/redaction";
import { compileRetryDelay } from "../retry-delay-expression";

/**
 * Each option's header name in each dialect, lower-case, made once: a name
 * joined at each read is a new string the lookup must hash first, thirteen
 * times a publish.
 */
const OPTION_HEADER_NAMES = Object.fromEntries(
  DIALECTS.map((dialect) => [
    dialect,
    Object.fromEntries(Object.keys(OPTION_HEADERS).map((name) => [name, `${PREFIX[dialect].toLowerCase()}${name}`])),
  ]),
) as Record<Dialect, Record<OptionHeader, string>>;

/** Bounds the options are checked against (from configuration). */
export interface PublishLimits {
  defaultRetries: number;
  maxRetries: number;
  maxTimeoutMs: number;
  maxDelayMs: number;
  /** The dialect of a request that has neither `Svc-` nor `Upstash-` headers. */
  defaultDialect: Dialect;
}

/**
 * What new messages are made with, from configuration: the limits their
 * options are checked against and the deduplication window they claim.
 * Publishing, callbacks, DLQ retries and workflow continuations share it.
 */
export interface MessageSettings {
  limits: PublishLimits;
  deduplicationWindowMs: number;
  /**
   * Multiplies the wait before a message's first attempt (Delay, Not-Before,
   * Callback-Delay, workflow sleeps); 1 outside tests. The stored Not-Before
   * keeps what was asked.
   */
  delayScale: number;
}

/** The message settings of a configuration. */
export function messageSettings(config: PublishLimits & { deduplicationWindowMs: number; delayScale: number }): MessageSettings {
  return { limits: config, deduplicationWindowMs: config.deduplicationWindowMs, delayScale: config.delayScale };
}

/** A callback target and the publish headers of the message that calls it. */
export interface CallbackTarget {
  url: string;
  /** Publish headers (canonical names, message's dialect) for the callback message. */
  headers: Record<string, string>;
}

/** What a publish asks for, validated. */
export interface PublishOptions {
  dialect: Dialect;
  method: string;
  contentType: string | null;
  timeoutMs: number | null;
  retries: number;
  retryDelayExpression: string | null;
  /** Headers sent to the destination, canonical names. */
  forwardHeaders: Record<string, string>;
  /** Unix seconds; wins over `delayMs`. */
  notBefore: number | null;
  delayMs: number;
  callback: CallbackTarget | null;
  failureCallback: CallbackTarget | null;
  deduplicationId: string | null;
  contentBasedDeduplication: boolean;
  labels: string[];
  /** What the API hides (`Redact-Fields`, messages/redaction.ts); the originals are still delivered. */
  redactFields: RedactFields;
  /** Flow control (`Flow-Control-Key` / `-Value`); kept on workflow runs. */
  flowControl: FlowControl | null;
  /** The workflow run the message belongs to, if any (docs/workflow-protocol.md §2.1). */
  workflow: WorkflowBinding | null;
}

export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Incoming headers never forwarded in header-forward mode besides the hop
 * headers every forward drops: the credentials meant for Dispatch and the
 * content type, which is stored apart.
 */
const NOT_FORWARDED = new Set(["authorization", "proxy-authorization", "content-type"]);

/**
 * Parses publish headers. `headers` has lower-case names (as node:http gives
 * them); only headers of `dialect` are read as configuration.
 */
export function parsePublishOptions(
  headers: Record<string, string>,
  dialect: Dialect,
  limits: PublishLimits,
  /** How errors name the headers: the prefix as the client sent it (`svc-callback-` for callback headers). */
  label = PREFIX[dialect].toLowerCase(),
): PublishOptions {
  const p = PREFIX[dialect].toLowerCase();
  const names = OPTION_HEADER_NAMES[dialect];
  const get = (name: OptionHeader) => headers[names[name]];
  const retries = parseRetries(get("retries"), label, limits);
  const options: PublishOptions = {
    dialect,
    method: parseMethod(get("method"), label),
    // The Python and Go clients forward every header they are given, Content-Type included (docs/hosted-api.md §2.2).
    contentType: contentTypeOf(headers, p),
    timeoutMs: parseTimeout(get("timeout"), label, limits),
    retries,
    retryDelayExpression: parseRetryDelay(get("retry-delay"), label),
    forwardHeaders: forwardedHeaders(headers, p),
    notBefore: parseNotBefore(get("not-before"), label, limits),
    delayMs: parseDelay(get("delay"), label, limits),
    callback: callbackTarget(headers, p, "callback", retries),
    failureCallback: callbackTarget(headers, p, "failure-callback", retries),
    deduplicationId: parseDeduplicationId(get("deduplication-id"), label),
    contentBasedDeduplication: parseBoolean(get("content-based-deduplication"), `${label}content-based-deduplication`),
    labels: parseLabels(get("label"), label),
    redactFields: parseRedactFields(get("redact-fields"), `${label}redact-fields`),
    flowControl: parseFlowControl(get("flow-control-key"), get("flow-control-value"), label),
    workflow: readWorkflowBinding(headers, dialect),
  };
  if (options.callback) validateCallbackHeaders(options.callback, dialect, limits, `${label}callback-`);
  if (options.failureCallback) validateCallbackHeaders(options.failureCallback, dialect, limits, `${label}failure-callback-`);
  return options;
}

function parseMethod(value: string | undefined, p: string): string {
  if (value === undefined || value.trim() === "") return "POST";
  const method = value.trim().toUpperCase();
  if (!METHODS.includes(method)) throw badRequest(`${p}method must be one of ${METHODS.join(", ")}`);
  return method;
}

function parseRetries(value: string | undefined, p: string, limits: PublishLimits): number {
  if (value === undefined || value.trim() === "") return limits.defaultRetries;
  if (!/^\d+$/.test(value.trim())) throw badRequest(`${p}retries must be a non-negative integer, got "${value}"`);
  const retries = Number(value.trim());
  if (retries > limits.maxRetries) {
    throw overLimit(`${p}retries must be at most ${limits.maxRetries}, got ${retries}`, "DISPATCH_MAX_RETRIES");
  }
  return retries;
}

function parseTimeout(value: string | undefined, p: string, limits: PublishLimits): number | null {
  if (value === undefined || value.trim() === "") return null;
  const ms = parseDuration(value);
  if (ms === null || ms === 0) throw badRequest(`${p}timeout must be a duration such as 30s, 5m or 2h, got "${value}"`);
  if (ms > limits.maxTimeoutMs) {
    const maximum = `${limits.maxTimeoutMs / 1000}s`;
    throw overLimit(`${p}timeout may only shorten the maximum of ${maximum}, got "${value}"`, "DISPATCH_MAX_TIMEOUT");
  }
  return ms;
}

function parseDelay(value: string | undefined, p: string, limits: PublishLimits): number {
  if (value === undefined || value.trim() === "") return 0;
  const ms = parseDuration(value);
  if (ms === null) throw badRequest(`${p}delay must be a duration such as 10s, 5m, 2h or 1d, got "${value}"`);
  if (ms > limits.maxDelayMs) {
    throw overLimit(`${p}delay must be at most ${limits.maxDelayMs / 1000}s, got "${value}"`, "DISPATCH_MAX_DELAY");
  }
  return ms;
}

function parseNotBefore(value: string | undefined, p: string, limits: PublishLimits): number | null {
  if (value === undefined || value.trim() === "") return null;
  if (!/^\d+$/.test(value.trim())) throw badRequest(`${p}not-before must be a Unix timestamp in seconds, got "${value}"`);
  const seconds = Number(value.trim());
  if (seconds * 1000 > Date.now() + limits.maxDelayMs) {
    throw overLimit(`${p}not-before must be at most ${limits.maxDelayMs / 1000}s in the future`, "DISPATCH_MAX_DELAY");
  }
  return seconds;
}

function parseRetryDelay(value: string | undefined, p: string): string | null {
  if (value === undefined || value.trim() === "") return null;
  try {
    return compileRetryDelay(value.trim()).source;
  } catch (error) {
    throw badRequest(`${p}retry-delay: ${(error as Error).message}`);
  }
}

function parseDeduplicationId(value: string | undefined, p: string): string | null {
  if (value === undefined || value === "") return null;
  // eslint-disable-next-line no-control-regex
  if (value.length > 512 || /[\u0000-\u001f\s]/.test(value)) {
    throw badRequest(`${p}deduplication-id must be at most 512 characters without whitespace`);
  }
  return value;
}

/** Parses `true`/`false` in any case (the Python SDK sends `True`). */
export function parseBoolean(value: string | undefined, header: string): boolean {
  if (value === undefined || value.trim() === "") return false;
  const text = value.trim().toLowerCase();
  if (text !== "true" && text !== "false") throw badRequest(`${header} must be true or false, got "${value}"`);
  return text === "true";
}

function parseLabels(value: string | undefined, p: string): string[] {
  if (value === undefined || value.trim() === "") return [];
  const labels = value.split(",").map((label) => label.trim()).filter(Boolean);
  const bad = labels.find((label) => !NAME.test(label));
  if (bad !== undefined) throw badRequest(`${p}label "${bad}" may hold only letters, digits, ".", "_" and "-"`);
  return labels;
}

/** The Content-Type the message is sent with (the Python and Go clients forward it too), checked as a header value. */
function contentTypeOf(headers: Record<string, string>, p: string): string | null {
  const contentType = headers["content-type"] ?? headers[`${p}forward-content-type`] ?? null;
  if (contentType !== null) checkHeaderFields({ "Content-Type": contentType }, "the");
  return contentType;
}

/**
 * `<p>forward-x` headers (prefix removed), or every plain header in
 * header-forward mode; an explicit forward wins over a plain header. Each set
 * loses its hop headers (headers/hop-headers.ts), so they are neither stored nor sent.
 */
function forwardedHeaders(headers: Record<string, string>, p: string): Record<string, string> {
  const forwardAll = parseBoolean(headers[p + ("header-forward" satisfies OptionHeader)], `${p}header-forward`);
  const forward = `${p}forward-`;
  let plain: Record<string, string> | null = null;
  let explicit: Record<string, string> | null = null;
  for (const name in headers) {
    if (name.startsWith(forward)) {
      const target = name.slice(forward.length);
      if (target !== "" && target !== "content-type") (explicit ??= {})[canonicalHeaderName(target)] = headers[name]!;
    } else if (forwardAll && !name.startsWith(p) && !NOT_FORWARDED.has(name)) {
      (plain ??= {})[canonicalHeaderName(name)] = headers[name]!;
    }
  }
  if (plain === null && explicit === null) return {};
  const forwarded =
    plain === null ? withoutHopHeaders(explicit!) : explicit === null ? withoutHopHeaders(plain) : { ...withoutHopHeaders(plain), ...withoutHopHeaders(explicit) };
  checkHeaderFields(forwarded, "forwarded");
  return forwarded;
}

/**
 * The callback (or failure callback) target. Every `<p><kind>-X` header
 * becomes `<p>X` on the callback message (docs/hosted-api.md §2.2), and the
 * callback keeps the original's retries unless it sets its own.
 */
function callbackTarget(
  headers: Record<string, string>,
  p: string,
  kind: OptionHeader & ("callback" | "failure-callback"),
  retries: number,
): CallbackTarget | null {
  const url = headers[p + kind];
  if (url === undefined || url.trim() === "") return null;
  const target = { url: parseHttpUrl(url.trim(), p + kind), headers: {} as Record<string, string> };
  const inner = `${p}${kind}-`;
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(inner)) target.headers[canonicalHeaderName(p + name.slice(inner.length))] = value;
  }
  const retriesHeader = canonicalHeaderName(`${p}retries`);
  target.headers[retriesHeader] ??= String(retries);
  return target;
}

function validateCallbackHeaders(target: CallbackTarget, dialect: Dialect, limits: PublishLimits, label: string): void {
  const lower = Object.fromEntries(Object.entries(target.headers).map(([name, value]) => [name.toLowerCase(), value]));
  parsePublishOptions(lower, dialect, limits, label);
}
