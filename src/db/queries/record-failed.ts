/**
 * A message that failed for good (its retries exhausted, or the destination
 * said not to retry): FAILED, off its queue. Only while it is still pending
 * under the claim that made the attempt (work-list.ts); the DLQ entry and the
 * failure callback are the outcome's (domain/delivery/outcome.ts).
 */
import type { Tx } from "../client";
import { updateClaimed } from "./work-list";

/** Marks `messageId` failed; false when a cancel or a sweep got there first. */
export function recordFailed(tx: Tx, messageId: string, claimId: number): Promise<boolean> {
  return updateClaimed(tx, messageId, claimId, tx`state = 'FAILED', completed_at = now(), pending_queue = null`);
}
