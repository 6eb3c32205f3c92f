/**
 * The workflow DLQ (docs/workflow-protocol.md §11, §13; docs/hosted-api.md §13.4): the
 * DLQ entries of failed runs. An entry is the `dispatch.dlq` row of the
 * message that failed its run — the one the run's `dlq_id` names — seen
 * together with that run. An entry is its run's project's: the functions
 * here see the entries of `project` only.
 */
import type postgres from "postgres";
import type { Tx } from "../../../db/client";
import { AppError } from "../../errors";
import { type TimeRange, withinRange } from "../../messages/filter";
import type { StoredMessage } from "../../messages/message";
import { findMessages } from "../../messages/message";
import { afterPosition, type Page, type PageOf, pageOf, positionCursor } from "../../paging";
import { failureFunctionState } from "../failure-function-state";
import { matchRuns, type RunFilter } from "../run-filter";

/** The failure function's final response, as `failRun`/`recordFailureFunction` keep it. */
export interface FailureResponse {
  status: number;
  headers: Record<string, string[]>;
  body: string;
}

/** A workflow DLQ entry: the failed message, its last response, and its run. */
export interface WorkflowDlqEntry {
  dlqId: string;
  error: string | null;
  responseStatus: number | null;
  responseHeaders: Record<string, string[]> | null;
  responseBody: Buffer | null;
  message: StoredMessage;
  run: {
    pk: number;
    runId: string;
    createdAt: Date;
    workflowUrl: string;
    labels: string[] | null;
    callerIp: string | null;
    failureCallback: string | null;
    flowControlKey: string | null;
    failureCallbackState: string | null;
    failureResponse: FailureResponse | null;
  };
}

/** Filters of the workflow DLQ: the run filter, and the failed message's last response status. */
export type WorkflowDlqFilter = RunFilter & { responseStatus?: number[] };

/** Entries by DLQ id, or by filter within a window of failure times. */
export type WorkflowDlqSelection = { dlqIds: string[] } | { filter: WorkflowDlqFilter; range: TimeRange };


/**
 * Of `dlqIds`, those that are entries of the workflow DLQ (the failed step a
 * run's `dlq_id` names). The plain DLQ asks with ids it picked in its project.
 */
export async function runEntryIds(tx: Tx, project: string, dlqIds: string[]): Promise<Set<string>> {
  const rows = await tx<{ dlqId: string }[]>`
    select dlq_id as "dlqId" from dispatch.workflow_runs where project = ${project} and dlq_id = any(${dlqIds}::text[])`;
  return new Set(rows.map((row) => row.dlqId));
}

/** Lists the entries `selection` picks, a page at a time. */
export function listWorkflowDlq(tx: Tx, project: string, selection: WorkflowDlqSelection, page: Page) {
  return selectWorkflowDlq(tx, project, selection, page, false);
}

/** One entry, or a 404. With `lock`, a concurrent action on the entry waits for this transaction. */
export async function findWorkflowDlqEntry(tx: Tx, project: string, dlqId: string, lock = false): Promise<WorkflowDlqEntry> {
  const { items } = await selectWorkflowDlq(tx, project, { dlqIds: [dlqId] }, { cursor: null, count: 1 }, lock);
  if (items.length === 0) throw new AppError(404, `workflow DLQ entry ${dlqId} not found`);
  return items[0]!;
}

/** Deletes a page of the entries `selection` picks; returns their ids. The runs stay RUN_FAILED. */
export async function deleteWorkflowDlq(
  tx: Tx,
  project: string,
  selection: WorkflowDlqSelection,
  page: Page,
): Promise<PageOf<string>> {
  const { items, cursor } = await selectWorkflowDlq(tx, project, selection, page, true);
  const ids = items.map((entry) => entry.dlqId);
  await tx`delete from dispatch.dlq where dlq_id = any(${ids}::text[])`;
  return { items: ids, cursor };
}

type EntryRow = Omit<WorkflowDlqEntry, "message" | "run"> & {
  messageId: string;
  position: string;
  run: Omit<WorkflowDlqEntry["run"], "createdAt"> & { createdAt: number };
};

/**
 * The entries of `project` that `selection` picks, by time of failure then
 * id. `lock` takes their row locks: a concurrent resume or delete of an entry
 * waits, then finds it gone.
 */
export function selectWorkflowDlq(
  tx: Tx,
  project: string,
  selection: WorkflowDlqSelection,
  page: Page,
  lock: boolean,
): Promise<PageOf<WorkflowDlqEntry>> {
  const picked =
    "dlqIds" in selection ? tx`r.project = ${project} and d.dlq_id = any(${selection.dlqIds}::text[])` : matchEntries(tx, project, selection);
  return readEntries(tx, project, picked, page, lock);
}

/** The entries among `dlqIds`, locked: ids `project`'s plain DLQ has already picked (`resumeFromPlainRetry`). */
export async function lockEntriesPickedByPlainDlq(tx: Tx, project: string, dlqIds: string[]): Promise<WorkflowDlqEntry[]> {
  const picked = tx`d.dlq_id = any(${dlqIds}::text[])`;
  return (await readEntries(tx, project, picked, { cursor: null, count: dlqIds.length }, true)).items;
}

/** `project`'s entries the condition `picked` (on `d`, the DLQ row, and `r`, its run) holds for. */
async function readEntries(tx: Tx, project: string, picked: postgres.Fragment, page: Page, lock: boolean): Promise<PageOf<WorkflowDlqEntry>> {
  // Joined through the message (both primary keys): only the entry a run names as its dlq_id counts.
  const rows = await tx<EntryRow[]>`
    select d.dlq_id as "dlqId", d.message_id as "messageId", d.error, d.response_status as "responseStatus",
      d.response_headers as "responseHeaders", d.response_body as "responseBody",
      (extract(epoch from d.created_at) * 1000000)::bigint::text as position,
      json_build_object(
        'pk', r.pk, 'runId', r.run_id, 'createdAt', floor(extract(epoch from r.created_at) * 1000),
        'workflowUrl', r.workflow_url,
        'labels', r.labels, 'callerIp', r.caller_ip, 'failureCallback', r.config->>'failureCallback',
        'flowControlKey', r.config->'flowControl'->>'key', 'failureCallbackState', ${failureFunctionState(tx, project)},
        'failureResponse', r.failure_response) as run
    from dispatch.dlq d
    join dispatch.messages m on m.project = d.project and m.id = d.message_id
    join dispatch.workflow_runs r on r.project = m.project and r.pk = m.workflow_run_pk and r.dlq_id = d.dlq_id
    where d.project = ${project} and m.project = ${project} and r.project = ${project} and ${picked}
      and ${afterPosition(tx, page.cursor, tx`d.created_at`, tx`d.dlq_id`)}
    order by d.created_at, d.dlq_id
    limit ${page.count + 1}
    ${lock ? tx`for update of d` : tx``}`;
  const { kept, cursor } = pageOf(rows, page.count, (last) => positionCursor(last.position, last.dlqId));
  const messages = new Map((await findMessages(tx, kept.map((row) => row.messageId))).map((m) => [m.id, m]));
  return {
    items: kept.map(({ messageId, position: _, run, ...entry }) => ({
      ...entry,
      message: messages.get(messageId)!,
      run: { ...run, createdAt: new Date(run.createdAt) },
    })),
    cursor,
  };
}

function matchEntries(tx: Tx, project: string, { filter, range }: { filter: WorkflowDlqFilter; range: TimeRange }): postgres.Fragment {
  const status = filter.responseStatus === undefined ? tx`true` : tx`d.response_status = any(${filter.responseStatus}::int[])`;
  return tx`${matchRuns(tx, project, filter)} and ${status} and ${withinRange(tx, tx`d.created_at`, range)}`;
}

