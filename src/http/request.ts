/** Reading the parts of a request the domain needs. */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { badRequest } from "../domain/errors";
import { detectDialect, type Dialect, PREFIX } from "../domain/headers/dialect";
import { checkText } from "../domain/storable-text";

/** A request's headers (lower-case names) and its dialect. */
export interface RequestHeaders {
  headers: Record<string, string>;
  dialect: Dialect;
}

/**
 * Request headers plus configuration given as query parameters in webhook
 * mode (`?upstash-retries=3`, docs/hosted-api.md §1.4); a header wins over a query
 * parameter of the same name. `fallback` is the dialect of a request with no
 * prefixed header (DISPATCH_DEFAULT_DIALECT).
 */
export function requestHeaders(c: Context, fallback: Dialect = "svc"): RequestHeaders {
  const headers = c.req.header();
  const dialect = detectDialect([...Object.keys(headers), ...new URL(c.req.url).searchParams.keys()], fallback);
  const prefix = PREFIX[dialect].toLowerCase();
  for (const [name, value] of new URL(c.req.url).searchParams) {
    const lower = name.toLowerCase();
    if (lower.startsWith(prefix) && headers[lower] === undefined) headers[lower] = value;
  }
  return { headers, dialect };
}

/** The publisher's address as the socket saw it (null outside a Node server, e.g. in `app.request`). */
export function callerIp(c: Context): string | null {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress ?? null;
}

/**
 * The raw remainder of the path after `prefix` (e.g. `/v2/publish/`), with the
 * request's own query string re-attached minus Dispatch's own parameters
 * (docs/hosted-api.md §1.3): clients put the destination URL in the path unencoded.
 */
export function rawDestination(c: Context, prefix: string): string {
  const url = new URL(c.req.url);
  const start = url.pathname.indexOf(prefix);
  let destination = url.pathname.slice(start + prefix.length);
  if (/^https?%3A/i.test(destination)) destination = decodeComponent(destination, "the destination");
  // Some proxies collapse `//`; repair `https:/host` to `https://host`.
  destination = destination.replace(/^(https?):\/(?!\/)/i, "$1://");
  // Filter the raw query so the destination's own encoding is kept byte for byte.
  const query = url.search.slice(1).split("&").filter((part) => part !== "" && !isOwnParameter(part));
  if (query.length > 0) destination += `?${query.join("&")}`;
  return destination;
}

/** Whether `part` (`name=value`, raw) is a parameter of Dispatch's: the token, or configuration read as a header. */
export function isOwnParameter(part: string): boolean {
  let lower: string;
  try {
    lower = decodeURIComponent(part.split("=")[0]!).toLowerCase();
  } catch {
    return false;
  }
  return isOwnParameterName(lower);
}

/** Whether a (lower-case, decoded) query parameter name is Dispatch's own: the token, or configuration read as a header. */
export function isOwnParameterName(lower: string): boolean {
  return lower === "qstash_token" || lower.startsWith("upstash-") || lower.startsWith("svc-");
}

/**
 * `raw` percent-decoded, when it decodes to UTF-8 text Postgres can store
 * (`checkText`) of at most `maxBytes` bytes; else a 400 naming `what`.
 */
export function decodeComponent(raw: string, what: string, maxBytes = Number.POSITIVE_INFINITY): string {
  let text: string;
  try {
    text = decodeURIComponent(raw);
  } catch {
    throw badRequest(`${what} is not valid percent-encoded UTF-8`);
  }
  return checkText(text, what, maxBytes);
}
