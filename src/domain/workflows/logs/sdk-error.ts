/**
 * The error a workflow step failed with, as the SDK answers it: `serve()`
 * catches what the route threw and answers 500 (489 for a non-retryable
 * error, 429 for a retry-after one) with the JSON `{"error": <name>,
 * "message": <message>, "stack": <stack>}` (`formatWorkflowError` in
 * @upstash/workflow 1.3.3; docs/workflow-protocol.md §9.3, §10). The failure
 * function reads the same body back from the failure callback.
 */

/** A thrown error as the SDK reported it; `stack` holds the stack's lines after its heading, one per frame. */
export interface SdkError {
  name: string;
  message: string;
  stack: string[];
}

/** The SDK's error in a response `body`, or null when the body is not one. */
export function sdkError(body: string): SdkError | null {
  const parsed = parseObject(body);
  if (parsed === null || typeof parsed.error !== "string" || typeof parsed.message !== "string") return null;
  const stack = typeof parsed.stack === "string" ? stackLines(parsed.stack, `${parsed.error}: ${parsed.message}`) : [];
  return { name: parsed.error, message: parsed.message, stack };
}

/** The lines of a JavaScript stack, trimmed, without its heading (`Name: message`, which may span lines) and blank lines. */
function stackLines(stack: string, heading: string): string[] {
  const frames = stack.startsWith(heading) ? stack.slice(heading.length) : stack;
  return frames
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

function parseObject(body: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
