/**
 * The state of a failed run's failure function as the API shows it
 * (docs/hosted-api.md §13.4). The column `failure_callback_state` holds
 * CALLBACK_INPROGRESS, CALLBACK_SUCCESS or CALLBACK_FAIL; a failure callback
 * cancelled while under way (`DELETE /v2/workflows/dlq/callback/{dlqId}`, or a
 * cancel of its message) keeps CALLBACK_INPROGRESS there and is shown, and
 * filtered, as CALLBACK_CANCELED: its message is cancelled and no outcome
 * will ever be recorded for it.
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";

/** What the API shows of a failure function: the stored states and CALLBACK_CANCELED. */
export const FAILURE_FUNCTION_STATES = ["CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL", "CALLBACK_CANCELED"] as const;

/**
 * The shown state of the failure function of the runs row `r` of `project` (null when the run has none).
 * The project is named as a value: on Citus a subquery correlated on the project column keeps a locking
 * statement from being routed to the project's node.
 */
export function failureFunctionState(tx: Tx, project: string): postgres.Fragment {
  return tx`(case
    when r.failure_callback_state = 'CALLBACK_INPROGRESS' and exists (
      select 1 from dispatch.messages fm
      where fm.project = ${project} and fm.id = r.failure_callback_message_id and fm.state = 'CANCELED')
    then 'CALLBACK_CANCELED'
    else r.failure_callback_state end)`;
}
