/**
 * Delivering from the publishing process: a process that runs the API and a
 * worker stores an immediate message (`canClaimAtInsert`) already claimed by
 * its own worker while that worker has free slots, and starts the attempt
 * right after the commit. The message skips the work list: no claim update,
 * no NOTIFY, no wake-up between publish and attempt (README "Architecture:
 * the delivery engine"). Crash safety is the claim's, as for any claimed
 * message: the sweep of a dead process's claims puts it back on the work list.
 */
import type { ClaimedMessage } from "../../db/queries/claim-messages";

/** The worker of this process, as the publish path sees it (worker/claimer.ts implements it). */
export interface LocalDelivery {
  /** The worker the claims are registered for (its heartbeat keeps them). */
  readonly workerId: string;
  /** Takes up to `count` delivery slots; returns how many it got (0 while the work list has due messages). */
  reserve(count: number): number;
  /**
   * Gives back `count` slots taken by `reserve` and not used. `maybeStored`:
   * the insert failed in a way that may have committed, so claims this worker
   * never heard of may exist (it releases them before it claims again).
   */
  release(count: number, maybeStored: boolean): void;
  /** Attempts messages stored claimed by this worker, in slots taken by `reserve`. */
  deliver(messages: ClaimedMessage[]): void;
}
