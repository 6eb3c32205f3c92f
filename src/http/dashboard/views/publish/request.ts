/**
 * A publish (or schedule) form as the request the API would have been sent:
 * the destination, the body, and the headers the fields stand for, in the
 * dialect the form chose (`Upstash-Delay` or `Svc-Delay`, …; the message is
 * then signed and headed in it). The domain reads and checks them as it
 * reads an API request's (domain/publish/options.ts), so a value the API
 * refuses is refused here with the same words.
 *
 * The headers field takes one `Name: value` a line: each is delivered to the
 * destination (as `Upstash-Forward-Name` would ask), `Content-Type` is the
 * message's content type, and a line in either prefix sets a publish option
 * as its header does on the API (`Upstash-Timeout: 30s`, `Svc-Label:
 * billing`), in the chosen dialect. A field of the form wins over a line
 * naming the same option.
 */
import { DIALECTS, type Dialect } from "../../../../db/vocabulary";
import { badRequest, tooLarge } from "../../../../domain/errors";
import { PREFIX } from "../../../../domain/headers/dialect";
import type { OptionHeader } from "../../../../domain/publish/option-headers";

/** The prefixes a header line may set an option with, lower case. */
const OPTION_PREFIXES = DIALECTS.map((dialect) => PREFIX[dialect].toLowerCase());

/** Form fields that set a publish option, and the option's header (after the prefix). */
export const OPTION_FIELDS = {
  method: "method",
  delay: "delay",
  retries: "retries",
  callback: "callback",
  failureCallback: "failure-callback",
  deduplicationId: "deduplication-id",
  flowControlKey: "flow-control-key",
} as const satisfies Record<string, OptionHeader>;

/** The limits of `Flow-Control-Value`, by form field. */
const FLOW_CONTROL_LIMITS = ["parallelism", "rate", "period"] as const;

/** Request headers are at most this large together, as Node bounds an API request's. */
const MAX_HEADER_BYTES = 16 * 1024;

/** A header name (RFC 9110 §5.6.2 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The dialect the form chose (its `dialect` field), else `fallback` (the deployment's, DISPATCH_DEFAULT_DIALECT). */
export function formDialect(form: Map<string, string>, fallback: Dialect): Dialect {
  const chosen = form.get("dialect")?.trim() ?? "";
  if (chosen === "") return fallback;
  if (!(DIALECTS as readonly string[]).includes(chosen)) throw badRequest(`dialect must be one of ${DIALECTS.join(", ")}`);
  return chosen as Dialect;
}

/** The headers (lower-case names) of the form's fields and header lines, in `dialect`, as an API request would carry them. */
export function formHeaders(form: Map<string, string>, dialect: Dialect, fields: Record<string, string> = OPTION_FIELDS): Record<string, string> {
  const P = PREFIX[dialect].toLowerCase();
  const headers = headerLines(form.get("headers") ?? "", dialect);
  // A form with no option field set still names its dialect, as the SDK's publish always does.
  headers[`${P}method`] ??= "POST";
  const contentType = form.get("contentType")?.trim() ?? "";
  if (contentType !== "") headers["content-type"] = contentType;
  for (const [field, option] of Object.entries(fields)) {
    const value = form.get(field)?.trim() ?? "";
    if (value !== "") headers[P + option] = value;
  }
  const limits = FLOW_CONTROL_LIMITS.flatMap((name) => {
    const value = form.get(name)?.trim() ?? "";
    return value === "" ? [] : [`${name}=${value}`];
  });
  if (limits.length > 0) headers[`${P}flow-control-value`] = limits.join(", ");
  return headers;
}

/**
 * `Name: value` lines as request headers in `dialect`: an option header
 * (`Svc-` or `Upstash-`) in its prefix, `Content-Type` as it is, any other
 * as a header to forward. Blank lines are skipped; a name given twice has
 * its values joined with ", ", as HTTP reads it.
 */
export function headerLines(text: string, dialect: Dialect): Record<string, string> {
  const P = PREFIX[dialect].toLowerCase();
  if (Buffer.byteLength(text) > MAX_HEADER_BYTES) throw badRequest(`the headers are at most ${MAX_HEADER_BYTES} bytes together`);
  const headers: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "") return;
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (colon < 0 || !TOKEN.test(name)) {
      throw badRequest(`header line ${index + 1} ("${line.trim().slice(0, 60)}") must be Name: value, the name letters, digits and -`);
    }
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) throw badRequest(`header ${name} holds a control character`);
    const lower = name.toLowerCase();
    const option = OPTION_PREFIXES.find((prefix) => lower.startsWith(prefix));
    const key = option !== undefined ? P + lower.slice(option.length) : lower === "content-type" ? lower : `${P}forward-${lower}`;
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  });
  return headers;
}

/** The body field as bytes: UTF-8, line breaks as `\n` (a browser sends a text area's as `\r\n`); a 413 above `maxBytes`. */
export function formBody(form: Map<string, string>, maxBytes: number): Buffer {
  const body = Buffer.from((form.get("body") ?? "").replace(/\r\n/g, "\n"));
  if (body.length > maxBytes) throw tooLarge("the body", maxBytes);
  return body;
}
