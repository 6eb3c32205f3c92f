/**
 * Workflow wait timeouts, as graphile-worker jobs (worker/timed-jobs/): a
 * waiter's timeout is a job at its deadline, added in the waiter's own
 * transaction (a rollback leaves no job) and removed when a notify resolves
 * the wait first. Jobs carry the waiter's id, never a body.
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
