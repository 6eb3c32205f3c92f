/**
 * The instant a message with a `Not-Before` may first be delivered. A plain
 * publish's `Not-Before: N` means the start of second N. A workflow run's
 * means the end of it (docs/workflow-protocol.md §5): the SDK sends the time
 * rounded to the nearest second (`context.sleepUntil` takes Unix seconds as
 * given, or `Math.round` of a date's, and its client writes the header with
 * `toFixed(0)`), so `N` stands for some instant in [N − 0.5 s, N + 0.5 s),
 * and the step waits until N + 0.5 s: it never runs before the time the
 * workflow asked for.
 */
import type { WorkflowBinding } from "../headers/workflow";

/** How far past second N a run's message with `Not-Before: N` waits: half a second, the SDK's rounding. */
export const WORKFLOW_ROUNDING_MS = 500;

/** The first attempt's instant (Unix ms) for `Not-Before: notBefore` (Unix seconds), or null without one. */
export function notBeforeMs(notBefore: number | null, workflow: WorkflowBinding | null): number | null {
  if (notBefore === null) return null;
  return notBefore * 1000 + (workflow === null ? 0 : WORKFLOW_ROUNDING_MS);
}
