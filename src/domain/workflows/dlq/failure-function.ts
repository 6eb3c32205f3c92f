/**
 * The failure function of a run held in the workflow DLQ (docs/hosted-api.md
 * §13.4): retrying one that failed (`POST /v2/workflows/dlq/callback/{dlqId}`)
 * and cancelling one under way (`DELETE /v2/workflows/dlq/callback/{dlqId}`).
 * The states are those the API shows (failure-function-state.ts).
 */
import type { Tx } from "../../../db/client";
import { AppError, badRequest } from "../../errors";
import { cancelMessages } from "../../messages/cancel";
import { findMessages } from "../../messages/message";
import { insertMessages } from "../../publish/insert";
import type { MessageSettings } from "../../publish/options";
import { findLatestRun, findRun } from "../runs";
import { findWorkflowDlqEntry } from "./dlq";
import { rerunMessage, type StartedRun } from "./resume";

/**
 * Sends a run's failed failure callback again (its state is CALLBACK_FAIL,
 * else 400). The run and its DLQ entry are unchanged; the failed callback's
 * own entry in the plain DLQ is removed, as a DLQ retry would.
 */
export async function retryFailureFunction(tx: Tx, project: string, dlqId: string, settings: MessageSettings): Promise<StartedRun> {
  const entry = await findWorkflowDlqEntry(tx, project, dlqId, true);
  const run = (await findRun(tx, entry.run.pk))!;
  const state = entry.run.failureCallbackState;
  if (state !== "CALLBACK_FAIL" || run.failureCallbackMessageId === null) {
    throw badRequest(`the failure function of workflow run ${run.runId} has not failed (state: ${state ?? "none"})`);
  }
  // The callback joins the latest run with its id; a later run reusing the id would take it.
  if ((await findLatestRun(tx, project, run.runId))?.pk !== run.pk) {
    throw new AppError(409, `workflow run id ${run.runId} has been reused by a later run`);
  }
  const [failed] = await findMessages(tx, [run.failureCallbackMessageId]);
  if (!failed) throw badRequest(`the failure callback of workflow run ${run.runId} is no longer stored`);
  const message = rerunMessage(failed, failed.body, run, 0);
  await insertMessages(tx, [message], settings);
  await tx`
    update dispatch.workflow_runs
    set failure_callback_state = 'CALLBACK_INPROGRESS', failure_callback_message_id = ${message.id}
    where pk = ${run.pk}`;
  await tx`delete from dispatch.dlq where message_id = ${failed.id}`;
  return { workflowRunId: run.runId, workflowCreatedAt: run.createdAt.getTime() };
}

/**
 * Cancels the failure callback under way for the run of DLQ entry `dlqId`
 * (shown CALLBACK_INPROGRESS: sent when the run failed, or re-sent by a
 * retry), else 400. Its message is cancelled — nothing more is sent, an
 * attempt already in flight may still land and is not recorded — and the
 * failure function shows CALLBACK_CANCELED, which a retry refuses.
 */
export async function cancelFailureFunction(tx: Tx, project: string, dlqId: string): Promise<void> {
  const entry = await findWorkflowDlqEntry(tx, project, dlqId, true);
  const run = (await findRun(tx, entry.run.pk))!;
  const state = entry.run.failureCallbackState;
  if (state !== "CALLBACK_INPROGRESS" || run.failureCallbackMessageId === null) {
    throw badRequest(`workflow run ${run.runId} has no failure callback in progress (state: ${state ?? "none"})`);
  }
  // An attempt finishing meanwhile holds the message row: the cancel waits for it, then finds the message finished.
  if ((await cancelMessages(tx, run.project, [run.failureCallbackMessageId])) === 0) {
    throw badRequest(`the failure callback of workflow run ${run.runId} has just finished`);
  }
}
