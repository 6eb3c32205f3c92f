/**
 * When a message of a workflow run with a `Not-Before` may first be delivered
 * (docs/workflow-protocol.md §5). The SDK sends the time rounded to the
 * nearest second: `context.sleepUntil` takes Unix seconds as given (or
 * `Math.round` of a date's), and its client writes the header with
 * `toFixed(0)`. So `Not-Before: N` stands for some instant in
 * [N − 0.5 s, N + 0.5 s), and the step waits until N + 0.5 s, the end of that
 * range: it never runs before the time the workflow asked for. A plain
 * publish's `Not-Before` keeps meaning the start of second N.
 */
import type { Tx } from "../../db/client";
import type { NewMessage } from "../messages/new-message";

/** How far past second N a run's message with `Not-Before: N` waits: half a second, the SDK's rounding. */
export const ROUNDING_MS = 500;

/**
 * Moves the `Not-Before` of the workflow messages among `messages` to the
 * end of the second it was rounded to. Stored times are counted from the
 * transaction's clock (`now()`, the same for the whole transaction), so the
 * time is given as a delay from that clock, read here; `not_before` then
 * holds N + 0.5 s.
 */
export async function holdRoundedNotBefore(tx: Tx, messages: NewMessage[]): Promise<void> {
  const timed = messages.filter((message) => message.workflow !== null && message.notBefore !== null);
  if (timed.length === 0) return;
  const [clock] = await tx<{ nowMs: number }[]>`select extract(epoch from now())::float8 * 1000 as "nowMs"`;
  for (const message of timed) {
    message.delayMs = Math.ceil(message.notBefore! * 1000 + ROUNDING_MS - clock!.nowMs);
    message.notBefore = null;
  }
}
