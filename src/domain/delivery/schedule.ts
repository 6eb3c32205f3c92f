/**
 * How work reaches the engine — two ways, both decided here:
 *
 * - Attempts of messages: a message is on the work list while its `due_at`
 *   is set. Publishing puts it there (`insert-messages.ts`), a queue start
 *   (`start-queued-messages.ts`), a retry (`outcome.ts`) and a sweep of a dead
 *   worker's claims (`sweep-claims.ts`) put it back; workers take it off with
 *   a claim (`claim-messages.ts`). One path serves immediate, delayed and
 *   retried attempts: the claim's index scan stops at the first message not
 *   yet due, so future messages cost nothing until then. Writers that make a
 *   message due now send one NOTIFY on `DUE_CHANNEL` (`insert-messages.ts`)
 *   per statement; delayed ones are found by the workers' poll (README,
 *   "Architecture: the delivery engine").
 * - Timed jobs (workflow wait timeouts, maintenance): graphile-worker, as
 *   below. Jobs carry ids, never bodies, and are added in the caller's
 *   transaction, so a rollback leaves no job.
 */
import type { Tx } from "../../db/client";

/** Task that fires a workflow waiter's timeout. */
export const WAIT_TIMEOUT_TASK = "wait_timeout";

/** Schedules the timeout of waiter `waiterId` at `deadline` (keyed, so it can be removed). */
export async function scheduleWaitTimeout(tx: Tx, waiterId: number, deadline: Date): Promise<void> {
  await tx`
    select graphile_worker.add_job(${WAIT_TIMEOUT_TASK}, json_build_object('waiterId', ${waiterId}::bigint),
      run_at := ${deadline}, job_key := ${waitTimeoutKey(waiterId)})`;
}

/** Removes the timeout of a waiter that was resolved first. */
export async function cancelWaitTimeout(tx: Tx, waiterId: number): Promise<void> {
  await tx`select graphile_worker.remove_job(${waitTimeoutKey(waiterId)})`;
}

const waitTimeoutKey = (waiterId: number) => `wait:${waiterId}`;
