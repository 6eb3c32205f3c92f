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
  /**
   * Whether an insert takes a claim per project (on Citus, where a claim lives beside its messages,
   * on their project's node); else one claim holds all it stores, whatever their projects.
   */
  readonly claimsByProject: boolean;
  /**
   * Takes up to `count` delivery slots for one insert; returns how many it got
   * (0 while the work list has due messages). Every reservation that got
   * slots ends in `deliver` or `abandon`.
   */
  reserve(count: number): number;
  /**
   * Attempts the messages the insert stored claimed by this worker, in the
   * `reserved` slots it took (those the insert did not use are freed).
   */
  deliver(messages: ClaimedMessage[], reserved: number): void;
  /**
   * Frees the `reserved` slots of an insert that failed. It may have committed
   * with its answer lost, so claims this worker never heard of may exist: it
   * releases them before it claims again.
   */
  abandon(reserved: number): void;
}
