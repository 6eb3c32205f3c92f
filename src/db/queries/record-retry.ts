/**
 * A retry: the message goes back on the work list for its next attempt after
 * `delayMs` (a queued message keeps its queue slot). Only while it is still
 * pending under the claim that made the attempt (work-list.ts).
 */
import type postgres from "postgres";
import type { Tx } from "../client";
import { type ClaimedKey, updateClaimed } from "./work-list";

/**
 * Schedules the next attempt of `claimed`, due `retryAt(delayMs)`; false when a cancel or a sweep got there
 * first. The attempt's log row says when with the same expression (delivery/outcome.ts).
 */
export function recordRetry(tx: Tx, claimed: ClaimedKey, delayMs: number): Promise<boolean> {
  const at = retryAt(tx, delayMs);
  return updateClaimed(tx, claimed, tx`state = 'RETRY', retried = retried + 1, next_delivery_at = ${at}, due_at = ${at}`);
}

/** When a retry `delayMs` from now is due: now() is the transaction's start, so the same in every statement of it. */
export function retryAt(tx: Tx, delayMs: number | postgres.Fragment) {
  return tx`now() + ${delayMs} * interval '1 millisecond'`;
}
