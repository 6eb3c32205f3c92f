/**
 * A message that failed for good (its retries exhausted, or the destination
 * said not to retry): FAILED, off its queue. Only while it is still pending
 * under the claim that made the attempt (work-list.ts); the DLQ entry and the
 * failure callback are the outcome's (domain/delivery/outcome.ts).
 */
import type { Tx } from "../client";
import { type ClaimedKey, updateClaimed } from "./work-list";

/** Marks `claimed` failed; false when a cancel or a sweep got there first. */
export function recordFailed(tx: Tx, claimed: ClaimedKey): Promise<boolean> {
  return updateClaimed(tx, claimed, tx`state = 'FAILED', completed_at = now(), pending_queue = null`);
}
