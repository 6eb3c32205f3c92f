/** Reading the parts of a request the domain needs. */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { badRequest } from "../domain/errors";
import { detectDialect, PREFIX } from "../domain/headers/dialect";
import type { Dialect } from "../db/vocabulary";
import { checkText } from "../domain/storable-text";

/**
 * The parts of a request every layer reads, read once per request: the path
 * and the raw query (after `?`, without it) cut from `c.req.url` — which
 * @hono/node-server has already parsed and normalised with `new URL` — and
 * the headers as one record (lower-case names). Each is read by the input
 * checks, the token check and the route; parsing them again for each costs
 * a URL parse and a header walk per reader on the publish path.
 */
export interface RequestParts {
  pathname: string;
  /** The raw query string, without its `?`; "" when none. */
  query: string;
  /** Every header, lower-case names; never change it (`requestHeaders` copies it). */
  headers: Readonly<Record<string, string>>;
}

const parts = new WeakMap<Request, RequestParts>();

export function requestParts(c: Context): RequestParts {
  const known = parts.get(c.req.raw);
  if (known !== undefined) return known;
  const href = c.req.url;
  const pathStart = href.indexOf("/", href.indexOf("//") + 2);
  const hash = href.indexOf("#", pathStart);
  const end = hash === -1 ? href.length : hash;
  const question = href.indexOf("?", pathStart);
  const hasQuery = question !== -1 && question < end;
  const read: RequestParts = {
    pathname: pathStart === -1 ? "/" : href.slice(pathStart, hasQuery ? question : end),
    query: hasQuery ? href.slice(question + 1, end) : "",
    headers: incomingOf(c)?.rawHeaders ? headerRecord(incomingOf(c)!.rawHeaders) : c.req.header(),
  };
  parts.set(c.req.raw, read);
  return read;
}

const incomingOf = (c: Context) => (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;

/**
 * Node's raw header lines as one record, as the Fetch API's `Headers` (which
 * `c.req.header()` builds, at several times the cost) would give them: names
 * lower-cased, repeated headers joined with ", ", of `Set-Cookie` the last.
 */
function headerRecord(raw: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const known = record[name];
    record[name] = known === undefined || name === "set-cookie" ? raw[i + 1]! : `${known}, ${raw[i + 1]}`;
  }
  return record;
}

/** A request's headers (lower-case names) and its dialect. */
export interface RequestHeaders {
  headers: Record<string, string>;
  dialect: Dialect;
}

/**
 * Request headers (not to be changed: without a query they are the request's own record, `requestParts`)
 * plus configuration given as query parameters in webhook
 * mode (`?upstash-retries=3`, docs/hosted-api.md §1.4); a header wins over a query
 * parameter of the same name. `fallback` is the dialect of a request with no
 * prefixed header (DISPATCH_DEFAULT_DIALECT).
 */
export function requestHeaders(c: Context, fallback: Dialect = "svc"): RequestHeaders {
  const { headers: given, query } = requestParts(c);
  // Without a query (the common publish) the request's own record is answered: no route changes it.
  if (query === "") return { headers: given as Record<string, string>, dialect: detectDialect(Object.keys(given), fallback) };
  const headers = { ...given };
  const params = new URLSearchParams(query);
  const dialect = detectDialect([...Object.keys(headers), ...params.keys()], fallback);
  const prefix = PREFIX[dialect].toLowerCase();
  for (const [name, value] of params) {
    const lower = name.toLowerCase();
    if (lower.startsWith(prefix) && headers[lower] === undefined) headers[lower] = value;
  }
  return { headers, dialect };
}

/** The publisher's address as the socket saw it (null outside a Node server, e.g. in `app.request`). */
export function callerIp(c: Context): string | null {
  return incomingOf(c)?.socket.remoteAddress ?? null;
}

/**
 * The raw remainder of the path after `prefix` (e.g. `/v2/publish/`), with the
 * request's own query string re-attached minus Dispatch's own parameters
 * (docs/hosted-api.md §1.3): clients put the destination URL in the path unencoded.
 */
export function rawDestination(c: Context, prefix: string): string {
  const { pathname, query: search } = requestParts(c);
  const start = pathname.indexOf(prefix);
  let destination = pathname.slice(start + prefix.length);
  if (/^https?%3A/i.test(destination)) destination = decodeComponent(destination, "the destination");
  // Some proxies collapse `//`; repair `https:/host` to `https://host`.
  destination = destination.replace(/^(https?):\/(?!\/)/i, "$1://");
  // Filter the raw query so the destination's own encoding is kept byte for byte.
  const query = search === "" ? [] : search.split("&").filter((part) => part !== "" && !isOwnParameter(part));
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
