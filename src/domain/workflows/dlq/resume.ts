/**
 * Acting on failed runs held in the workflow DLQ (docs/interface.md "Bulk resume
 * of DLQ entries", docs/workflow-protocol.md §13): resume and restart start a new
 * run (new id, new createdAt) and remove the entry; the failed run stays
 * RUN_FAILED. The failure function's retry and cancel are failure-function.ts.
 */
import type { Tx } from "../../../db/client";
import { AppError } from "../../errors";
import type { WorkflowCallType } from "../../../db/vocabulary";
import { newMessageId } from "../../ids";
import type { StoredMessage } from "../../messages/message";
import type { NewMessage, PublishResult } from "../../messages/new-message";
import { findMessages } from "../../messages/message";
import type { Page, PageOf } from "../../paging";
import { insertMessages } from "../../publish/insert";
import type { MessageSettings } from "../../publish/options";
import { createRun, findRun } from "../runs";
import { newRunId } from "../trigger";
import { lockEntriesPickedByPlainDlq, selectWorkflowDlq, type WorkflowDlqEntry, type WorkflowDlqSelection } from "./dlq";
import { newRunConfig, rebindRunId, type RunOverrides, withLabels } from "./run-overrides";

/** `resume` continues from the failed step, keeping completed ones; `restart` starts over from the initial payload. */
export type NewRunMode = "resume" | "restart";

/** A run started (or acted on) from a DLQ entry. */
export interface StartedRun {
  workflowRunId: string;
  workflowCreatedAt: number;
}

/**
 * Resumes or restarts the runs of a page of the entries `selection` picks,
 * each as a new run, and removes their entries.
 */
export async function newRunsFromDlq(
  tx: Tx,
  project: string,
  selection: WorkflowDlqSelection,
  page: Page,
  mode: NewRunMode,
  overrides: RunOverrides,
  settings: MessageSettings,
): Promise<PageOf<StartedRun>> {
  const { items, cursor } = await selectWorkflowDlq(tx, project, selection, page, true);
  const runs: StartedRun[] = [];
  for (const entry of items) runs.push((await startNewRun(tx, entry, mode, overrides, settings)).started);
  await tx`delete from dispatch.dlq where project = ${project} and dlq_id = any(${items.map((entry) => entry.dlqId)}::text[])`;
  return { items: runs, cursor };
}

/**
 * A plain DLQ retry of entries that are failed steps of workflow runs
 * (dlq/run-entries.ts; the plain DLQ picked `dlqIds` in its project): each
 * run is resumed from its failed step, as the workflow DLQ's Resume does, and
 * its entry removed. Returns, by DLQ id, the message the new run published
 * for the failed step (what a retry answers).
 */
export async function resumeFromPlainRetry(
  tx: Tx,
  project: string,
  dlqIds: string[],
  overrides: RunOverrides,
  settings: MessageSettings,
): Promise<Map<string, PublishResult>> {
  const items = await lockEntriesPickedByPlainDlq(tx, project, dlqIds);
  const resumed = new Map<string, PublishResult>();
  for (const entry of items) {
    resumed.set(entry.dlqId, (await startNewRun(tx, entry, "resume", overrides, settings)).failedStep);
  }
  await tx`delete from dispatch.dlq where project = ${project} and dlq_id = any(${items.map((entry) => entry.dlqId)}::text[])`;
  return resumed;
}

/** Resumes or restarts the run of one entry, or answers 404. */
export async function newRunFromDlqEntry(
  tx: Tx,
  project: string,
  dlqId: string,
  mode: NewRunMode,
  overrides: RunOverrides,
  settings: MessageSettings,
): Promise<StartedRun> {
  const { items } = await newRunsFromDlq(tx, project, { dlqIds: [dlqId] }, { cursor: null, count: 1 }, mode, overrides, settings);
  if (items.length === 0) throw new AppError(404, `workflow DLQ entry ${dlqId} not found`);
  return items[0]!;
}

/**
 * The new run: the original's configuration (with the overrides), user
 * headers, labels, feature set and invoker; the original's step list up to
 * the point of failure; and its failed (or, for a restart, its init) message
 * published again to run under the new id.
 */
async function startNewRun(
  tx: Tx,
  entry: WorkflowDlqEntry,
  mode: NewRunMode,
  overrides: RunOverrides,
  settings: MessageSettings,
): Promise<{ started: StartedRun; failedStep: PublishResult }> {
  const original = (await findRun(tx, entry.run.pk))!;
  const runId = newRunId();
  const labels = overrides.labels ?? original.labels ?? [];
  const userHeaders = withLabels(original.userHeaders, overrides.labels, original.dialect, true);
  const created = await createRun(tx, {
    runId,
    project: original.project,
    workflowUrl: original.workflowUrl,
    dialect: original.dialect,
    config: newRunConfig(original, runId, userHeaders, overrides, settings.limits),
    userHeaders,
    labels,
    featureSet: original.featureSet ?? "",
    callerIp: original.callerIp,
    traceparent: original.traceparent,
    invoker: original.invoker,
  });
  if (!created) throw new Error(`new run id ${runId} is already in use`);
  const { kept, rerun } = await planSteps(tx, original.pk, entry.message, mode);
  await tx`
    insert into dispatch.workflow_steps (run_pk, project, message_id, call_type, body, created_at)
    select ${created.pk}, ${original.project}, message_id, call_type, body, created_at from dispatch.workflow_steps
    where seq = any(${kept}::bigint[]) order by seq`;
  const sources = new Map((await findMessages(tx, rerun.map((step) => step.messageId))).map((m) => [m.id, m]));
  const target = { runId, workflowUrl: original.workflowUrl, featureSet: original.featureSet };
  const sourceIds: string[] = [];
  const messages = rerun.flatMap(({ messageId, body }) => {
    const source = sources.get(messageId);
    if (!source) return [];
    sourceIds.push(messageId);
    // A step that was waiting (a sleep) keeps the rest of its wait; the failed one is due now.
    const delayMs = overrides.delayMs ?? Math.max(0, source.nextDeliveryAt.getTime() - Date.now());
    const message = rerunMessage(source, body, target, delayMs);
    message.headers = withLabels(message.headers, overrides.labels, original.dialect, false);
    message.labels = overrides.labels ?? message.labels;
    return [message];
  });
  const published = await insertMessages(tx, messages, settings);
  // What the new run publishes again for the failed step (the last resort: its last message).
  const failedStep = published[sourceIds.indexOf(entry.message.id)] ?? published.at(-1)!;
  return { started: { workflowRunId: runId, workflowCreatedAt: created.createdAt.getTime() }, failedStep };
}

/**
 * Which entries of the failed run's step list the new run keeps (by seq) and
 * which messages it publishes again (with their entry bodies). A restart
 * publishes only the init message. A resume keeps every entry whose message
 * was done, and publishes again the failed message and the messages its
 * failure cancelled (pending parallel branches, sleeps), in list order
 * ("only failed or pending steps run again"). A cancelled message that was
 * delivered all the same (its attempt was under way, or its outcome not yet
 * written, when the failure cancelled it: the attempt log has it) was done.
 * Failure-callback entries belong to the old run's failure and are dropped.
 */
async function planSteps(tx: Tx, runPk: number, failed: StoredMessage, mode: NewRunMode) {
  const entries = await tx<{ seq: number; messageId: string; callType: string; body: Buffer; pending: boolean }[]>`
    select s.seq, s.message_id as "messageId", s.call_type as "callType", s.body,
      coalesce(m.state = 'CANCELED' and m.workflow_run_pk = ${runPk} and not exists (
        select 1 from dispatch.attempts a where a.project = m.project and a.message_id = m.id and a.result = 'DELIVERED'), false) as pending
    from dispatch.workflow_steps s left join dispatch.messages m on m.project = s.project and m.id = s.message_id
    where s.run_pk = ${runPk} order by s.seq`;
  if (mode === "restart") return { kept: [] as number[], rerun: entries.slice(0, 1) };
  const kept: number[] = [];
  const rerun: { messageId: string; body: Buffer }[] = [];
  for (const entry of entries) {
    if (entry.callType === "failureCall") continue;
    if (entry.messageId === failed.id || entry.pending) rerun.push(entry);
    else kept.push(entry.seq);
  }
  if (!rerun.some((entry) => entry.messageId === failed.id)) rerun.push({ messageId: failed.id, body: failed.body });
  return { kept, rerun };
}

/** The run a message is published again into. */
export interface RerunTarget {
  runId: string;
  workflowUrl: string;
  featureSet: string | null;
}

/**
 * A copy of `source` as a new message of `target` (new id, no retries done).
 * Its step entry body is `body` (for an init message the initial payload);
 * binding appends that entry and applies the target run's configuration.
 */
export function rerunMessage(source: StoredMessage, body: Buffer, target: RerunTarget, delayMs: number): NewMessage {
  return {
    id: newMessageId(),
    project: source.project,
    dialect: source.dialect,
    origin: "workflow",
    sourceMessageId: null,
    url: source.url,
    topicName: null,
    endpointName: null,
    queueName: source.queueName,
    api: null,
    method: source.method,
    headers: source.headers,
    contentType: source.contentType,
    body,
    timeoutMs: source.timeoutMs,
    maxRetries: source.maxRetries,
    retryDelayExpression: source.retryDelayExpression,
    callback: source.callback,
    callbackHeaders: rebindRunId(source.callbackHeaders, target.runId),
    failureCallback: source.failureCallback,
    failureCallbackHeaders: rebindRunId(source.failureCallbackHeaders, target.runId),
    deduplicationId: null,
    deduplicationKey: null,
    labels: source.labels ?? [],
    redactFields: source.redactFields,
    scheduleId: null,
    callerIp: source.callerIp,
    traceparent: source.traceparent,
    notBeforeMs: null,
    delayMs,
    flowControl: null,
    workflow: {
      runId: target.runId,
      init: false,
      invoke: false,
      callType: (source.workflowCallType ?? "step") as WorkflowCallType,
      workflowUrl: target.workflowUrl,
      featureSet: (target.featureSet ?? "").split(",").filter(Boolean),
      triggeredBySdk: false,
    },
  };
}
