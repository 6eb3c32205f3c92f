/**
 * Text Postgres can store: the one rule for every string that comes in with a
 * request and becomes data or a query parameter (ids, names, filters, header
 * values, fields of JSON bodies). A `text` or `jsonb` value cannot hold NUL
 * (U+0000) and must be valid UTF-8, which a string with an unpaired UTF-16
 * surrogate (from a `\ud800` JSON escape) cannot be encoded as; postgres.js
 * would fail the query, and the request would end as a 500. A value that
 * breaks the rule is a 400 naming it, before any query runs.
 *
 * Message bodies are bytes (`bytea`), not text: they may hold anything, and
 * callers exempt them.
 */
import { badRequest } from "./errors";

/** NUL, or a surrogate not part of a pair (with the `u` flag a pair is one code point, not `Cs`). */
const UNSTORABLE = /[\u0000\p{Cs}]/u;

/**
 * Bound of an id or name a client gives (path parameters, workflow run ids),
 * in UTF-8 bytes. Ids Dispatch mints are 32 characters and names at most
 * 100; the run and event ids SDKs choose are short. 1 KiB is generous and
 * keeps index entries such as (run id, event id) below Postgres' limit of
 * 2704 bytes for a btree entry, which a longer id would exceed (a 500).
 */
export const MAX_ID_BYTES = 1024;

/** Where a value sits in a JSON document: keys and array indexes from the root. */
export type JsonPath = readonly (string | number)[];

/** Deeper JSON is refused: no body the API reads nests beyond a few levels, and the check recurses. */
export const MAX_JSON_DEPTH = 64;

/**
 * `value` when Postgres can store it as text and it is at most `maxBytes`
 * bytes of UTF-8, else a 400 naming `what` (e.g. `path parameter "id"`).
 */
export function checkText(value: string, what: string, maxBytes = Number.POSITIVE_INFINITY): string {
  const bad = UNSTORABLE.exec(value)?.[0];
  if (bad === "\u0000") throw badRequest(`${what} must not contain a NUL character (U+0000)`);
  if (bad !== undefined) throw badRequest(`${what} must be valid UTF-8 text (it holds an unpaired UTF-16 surrogate)`);
  if (value.length > maxBytes / 3 && Buffer.byteLength(value) > maxBytes) {
    throw badRequest(`${what} must be at most ${maxBytes} bytes`);
  }
  return value;
}

/**
 * Checks every string of a parsed JSON body with `checkText`, object keys
 * included; a value at a path `isBytes` accepts is a message body (stored as
 * bytes) and is skipped whole. Errors name the field, e.g. `[2].headers.x-a`.
 */
export function checkJsonText(
  json: unknown,
  isBytes: (path: JsonPath) => boolean = () => false,
  path: JsonPath = [],
): void {
  if (isBytes(path)) return;
  if (path.length > MAX_JSON_DEPTH) throw badRequest(`the body nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (typeof json === "string") checkText(json, path.length === 0 ? "the body" : `body field ${fieldName(path)}`);
  else if (Array.isArray(json)) json.forEach((item, index) => checkJsonText(item, isBytes, [...path, index]));
  else if (typeof json === "object" && json !== null) {
    for (const [key, item] of Object.entries(json)) {
      checkText(key, `a field name in the body${path.length === 0 ? "" : ` at ${fieldName(path)}`}`);
      checkJsonText(item, isBytes, [...path, key]);
    }
  }
}

/** `[2].headers.x-a` for `[2, "headers", "x-a"]`. */
function fieldName(path: JsonPath): string {
  return path.map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`)).join("").replace(/^\./, "");
}
