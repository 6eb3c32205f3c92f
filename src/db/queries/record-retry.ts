/**
 * A retry: the message goes back on the work list for its next attempt after
 * `delayMs` (a queued message keeps its queue slot). Only while it is still
 * pending under the claim that made the attempt (work-list.ts).
 */
import type { Tx } from "../client";
import { type ClaimedKey, updateClaimed } from "./work-list";

/** Schedules the next attempt of `claimed`; returns when it is due, or null when a cancel or a sweep got there first. */
export function recordRetry(tx: Tx, claimed: ClaimedKey, delayMs: number): Promise<Date | null> {
  const at = tx`now() + ${delayMs} * interval '1 millisecond'`;
  return updateClaimed(tx, claimed, tx`state = 'RETRY', retried = retried + 1, next_delivery_at = ${at}, due_at = ${at}`);
}
