/**
 * Which failed attempts count against a destination's circuit: those that say
 * the destination cannot take work now — it refused or reset the connection,
 * did not answer in time, could not be reached, answered 5xx or 429. An
 * answer that is about the message (any other 4xx, a 489), a destination the
 * network guard refused (a configuration matter) and a response cut off for
 * size do not count; nor does a 5xx the workflow SDK answered itself (a
 * step's code threw: the server is up).
 */

/**
 * What a finished attempt says of its destination (what delivery/attempt.ts's
 * `Attempt` holds, of which this reads only these fields): an answer, or a
 * network error with its code, or an attempt not sent at all.
 */
export type AttemptResult =
  | { kind: "response"; status: number; headers: Record<string, string[]> }
  | { kind: "error"; code: string | null; notSent?: true };

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const RESET_CODES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"]);
/** Every answer of the workflow SDK carries it (docs/workflow-protocol.md §3). */
const WORKFLOW_SDK_HEADER = "upstash-workflow-sdk-version";

/**
 * The kind of failure `attempt` was, as the breaker counts and names it
 * ("timeouts", "refused connections", "HTTP 503", ...), or null when it does
 * not count against its destination.
 */
export function failureKind(attempt: AttemptResult): string | null {
  if (attempt.kind === "response") {
    const { status, headers } = attempt;
    if (status === 429) return "HTTP 429";
    if (status < 500 || status > 599 || headers[WORKFLOW_SDK_HEADER] !== undefined) return null;
    return `HTTP ${status}`;
  }
  const { code } = attempt;
  if (code === null || attempt.notSent) return null;
  if (TIMEOUT_CODES.has(code)) return "timeouts";
  if (code === "ECONNREFUSED") return "refused connections";
  if (RESET_CODES.has(code)) return "reset connections";
  return "network errors";
}
