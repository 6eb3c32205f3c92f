/**
 * How a run ends (docs/workflow-protocol.md §8.2, §9): success, cancel and
 * failure, the failure function's bookkeeping, and the report an invoked run
 * sends back to its parent. Everything runs in the caller's transaction.
 */
import type { Tx } from "../../db/client";
import { isPending } from "../../db/vocabulary";
import type { Attempt, Outcome } from "../delivery/attempt";
import { newMessageId } from "../ids";
import { cancelMessages } from "../messages/cancel";
import type { StoredMessage } from "../messages/message";
import { insertMessages } from "../publish/insert";
import { type MessageSettings, parsePublishOptions } from "../publish/options";
import { buildMessage } from "../publish/prepare";
import { appendSteps, endRun, findRun, initialPayload, type Run } from "./runs";

/** Whether a message's failure fails its run: steps and call results do, calls and failure callbacks do not. */
export const failsRun = (message: StoredMessage) =>
  message.workflowRunPk !== null && (message.workflowCallType === "step" || message.workflowCallType === "fromCallback");

/** Extra fields of a workflow message's callback body (§6.2, §9.3). */
export async function workflowCallbackFields(tx: Tx, message: StoredMessage, final: boolean) {
  if (message.workflowRunPk === null) return {};
  const run = await findRun(tx, message.workflowRunPk);
  if (!run) return {};
  return {
    workflowRunId: run.runId,
    workflowCreatedAt: run.createdAt.getTime(),
    // InitialBody: the failure function reads the run's initial payload from sourceBody.
    sourceBody: (await initialPayload(tx, run.pk)).toString("base64"),
    // The SDK ignores a failed call result unless retried equals maxRetries (§6.2 item 3).
    ...(final && message.workflowCallType === "toCallback" && { retried: message.maxRetries }),
  };
}

/**
 * A step of the run failed for good: the run is RUN_FAILED with its DLQ
 * entry, its other pending messages are cancelled, the failure callback (made
 * by the caller) is recorded as in progress, and an invoker hears of it.
 */
export async function failRun(
  tx: Tx,
  message: StoredMessage,
  attempt: Attempt,
  failed: { dlqId: string; failureCallbackId: string | null },
  settings: MessageSettings,
): Promise<void> {
  const run = await findRun(tx, message.workflowRunPk!);
  if (!run || !(await endRun(tx, run.pk, "RUN_FAILED", { dlqId: failed.dlqId }))) return;
  const response = attempt.kind === "response" ? attempt : null;
  await tx`
    update dispatch.workflow_runs set
      failure = ${tx.json({
        status: response?.status ?? 0,
        headers: response?.headers ?? {},
        body: response?.body.toString("utf8") ?? (attempt.kind === "error" ? attempt.error : ""),
      })},
      failure_callback_message_id = ${failed.failureCallbackId},
      failure_callback_state = ${failed.failureCallbackId === null ? null : "CALLBACK_INPROGRESS"}
    where pk = ${run.pk}`;
  await cancelPendingSteps(tx, run, message.id);
  await reportToInvoker(tx, run, { isFailed: true, isCanceled: false }, settings);
}

/** Records the failure function's outcome on its run (CALLBACK_SUCCESS / CALLBACK_FAIL). */
export async function recordFailureFunction(tx: Tx, message: StoredMessage, attempt: Attempt, outcome: Outcome) {
  if (message.workflowCallType !== "failureCall" || outcome.kind === "retry") return;
  const response = attempt.kind === "response" ? attempt : null;
  await tx`
    update dispatch.workflow_runs set
      failure_callback_message_id = ${message.id},
      failure_callback_state = ${outcome.kind === "delivered" ? "CALLBACK_SUCCESS" : "CALLBACK_FAIL"},
      failure_response = ${tx.json({
        status: response?.status ?? 0,
        headers: response?.headers ?? {},
        body: response?.body.toString("utf8") ?? "",
      })}
    where pk = ${message.workflowRunPk}`;
}

/** Ends an active run as RUN_SUCCESS (with the workflow's return value) or RUN_CANCELED. */
export async function finishRun(
  tx: Tx,
  run: Run,
  state: "RUN_SUCCESS" | "RUN_CANCELED",
  response: string | null,
  settings: MessageSettings,
): Promise<boolean> {
  if (!(await endRun(tx, run.pk, state, { response }))) return false;
  if (state === "RUN_CANCELED") await cancelPendingSteps(tx, run, null);
  const report = state === "RUN_SUCCESS" ? { body: response ?? undefined, isFailed: false, isCanceled: false } : { isFailed: false, isCanceled: true };
  await reportToInvoker(tx, run, report, settings);
  return true;
}

async function cancelPendingSteps(tx: Tx, run: { pk: number; project: string }, except: string | null): Promise<void> {
  const pending = await tx<{ id: string }[]>`
    select id from dispatch.messages
    where project = ${run.project} and workflow_run_pk = ${run.pk} and ${isPending(tx)} and workflow_call_type <> 'failureCall'
      and id <> ${except ?? ""}`;
  await cancelMessages(tx, run.project, pending.map((row) => row.id));
  await tx`delete from dispatch.workflow_waiters where project = ${run.project} and run_pk = ${run.pk}`;
}

/**
 * An invoked run reports its end to its parent (§8.2): an Invoke result step
 * with explicit booleans. If the parent has ended meanwhile the result is only
 * recorded in its step list.
 */
async function reportToInvoker(
  tx: Tx,
  run: Run,
  result: { body?: string; isFailed: boolean; isCanceled: boolean },
  settings: MessageSettings,
): Promise<void> {
  if (!run.invoker) return;
  const { invoker } = run;
  const step = { ...invoker.step, stepType: "Invoke", out: JSON.stringify(result) };
  const body = Buffer.from(JSON.stringify(step));
  const headers = Object.fromEntries(
    Object.entries(invoker.headers).map(([name, values]) => [name.toLowerCase(), [values].flat()[0] ?? ""]),
  );
  await publishContinuation(tx, invoker.workflowUrl, headers, body, run, settings);
}

/** What became of a continuation: its message id, and whether it was a duplicate or only recorded. */
export interface Continuation {
  messageId: string;
  deduplicated: boolean;
  /** The run is no longer active: the step was only appended to its list, nothing is delivered. */
  recordedOnly: boolean;
}

/**
 * Publishes a server-made step of a run (invoke result, notify, wait timeout)
 * to `url` with publish `headers` naming the run; when the run is no longer
 * active the entry is only appended to its step list.
 */
export async function publishContinuation(
  tx: Tx,
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  about: Pick<Run, "project" | "dialect" | "callerIp">,
  settings: MessageSettings,
): Promise<Continuation> {
  const options = parsePublishOptions(headers, about.dialect, settings.limits);
  const message = buildMessage(options, { url }, body, {
    project: about.project,
    origin: "workflow",
    sourceMessageId: null,
    callerIp: about.callerIp,
  });
  const runId = options.workflow?.runId;
  const [active] = runId
    ? await tx<{ pk: number }[]>`select pk from dispatch.workflow_runs where project = ${about.project} and run_id = ${runId} and state = 'RUN_STARTED'`
    : [];
  if (!active && runId) {
    const [latest] = await tx<{ pk: number }[]>`
      select pk from dispatch.workflow_runs where project = ${about.project} and run_id = ${runId} order by created_at desc, pk desc limit 1`;
    const id = newMessageId();
    if (latest) await appendSteps(tx, [{ runPk: latest.pk, project: about.project, messageId: id, callType: "step", body }]);
    return { messageId: id, deduplicated: false, recordedOnly: true };
  }
  const [published] = await insertMessages(tx, [message], settings);
  return { messageId: published!.messageId, deduplicated: published!.deduplicated, recordedOnly: false };
}
