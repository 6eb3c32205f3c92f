/**
 * A retry: the message goes back on the work list for its next attempt after
 * `delayMs` (a queued message keeps its queue slot). Only while it is still
 * pending under the claim that made the attempt (work-list.ts).
 */
import type { Tx } from "../client";
import { isPending } from "../vocabulary";

/** Schedules the next attempt of `messageId`; false when a cancel or a sweep got there first. */
export async function recordRetry(tx: Tx, messageId: string, claimId: number, delayMs: number): Promise<boolean> {
  const changed = await tx`
    update dispatch.messages
    set state = 'RETRY', retried = retried + 1, next_delivery_at = now() + ${delayMs} * interval '1 millisecond',
      due_at = now() + ${delayMs} * interval '1 millisecond'
    where id = ${messageId} and claim_id = ${claimId} and ${isPending(tx)}
    returning id`;
  return changed.length > 0;
}
