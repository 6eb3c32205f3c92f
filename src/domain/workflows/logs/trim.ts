/**
 * `trimBody` of the run logs and events (docs/hosted-api.md §13.2): request
 * and response bodies cut to at most that many bytes, or left out with -1.
 * The bodies are the fields named in `BODY_FIELDS` wherever they appear (a
 * step's output, a call's request and response, an invoked run's input, a
 * failed attempt's response, the run's result, the failure's response);
 * header maps are never touched.
 */

/** How bodies are shown: whole (null), cut to at most this many UTF-8 bytes, or left out (-1). */
export type BodyLimit = number | null;

const BODY_FIELDS = new Set([
  "out",
  "body",
  "callBody",
  "callResponseBody",
  "invokedWorkflowRunBody",
  "responseBody",
  "workflowRunResponse",
  "failResponse",
]);

/** `value` (a run log, an event, lists of them) with its bodies trimmed to `limit`. */
export function trimBodies<T>(value: T, limit: BodyLimit): T {
  return limit === null ? value : (trimmed(value, limit) as T);
}

function trimmed(value: unknown, limit: number): unknown {
  if (Array.isArray(value)) return value.map((item) => trimmed(item, limit));
  if (typeof value !== "object" || value === null) return value;
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (/header/i.test(key)) kept[key] = field;
    else if (!BODY_FIELDS.has(key)) kept[key] = trimmed(field, limit);
    else if (limit >= 0 && field !== undefined) kept[key] = trimmedBody(field, limit);
  }
  return kept;
}

/** A body cut to `limit` bytes; one that is not text (a JSON value) is cut as its JSON text, and kept as it is when that fits. */
function trimmedBody(body: unknown, limit: number): unknown {
  if (typeof body === "string") return cut(body, limit);
  const text = JSON.stringify(body);
  return Buffer.byteLength(text) <= limit ? body : cut(text, limit);
}

/** The longest prefix of `text` of at most `bytes` UTF-8 bytes that does not split a character. */
export function cut(text: string, bytes: number): string {
  const encoded = Buffer.from(text, "utf8");
  if (encoded.length <= bytes) return text;
  let end = bytes;
  // A continuation byte (10xxxxxx) right after the cut means the cut is inside a character.
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end -= 1;
  return encoded.subarray(0, end).toString("utf8");
}
