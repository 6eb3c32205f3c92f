/**
 * The dead letter queue (docs/hosted-api.md §8): messages whose retries ran out,
 * with the last response. Entries are listed, read, deleted, or retried — a
 * retry publishes a new message like the original and removes the entry, in
 * one transaction, and the original keeps a link to it (retry-links.ts).
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import { AppError } from "../errors";
import { PREFIX } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import { matchMessages, type MessageFilter, type Order, type TimeRange, withinRange } from "../messages/filter";
import type { StoredMessage } from "../messages/message";
import type { NewMessage, PublishResult } from "../messages/new-message";
import { unionFields } from "../messages/redaction";
import { findMessages } from "../messages/message";
import { afterPosition, type Page, type PageOf, pageOf, positionCursor } from "../paging";
import { insertMessages } from "../publish/insert";
import { parsePublishOptions, type PublishLimits, type MessageSettings } from "../publish/options";
import { buildMessage } from "../publish/prepare";
import { linkRetries } from "../../db/queries/link-retries";
import { type RetryOverrides, runEntries } from "./run-entries";

/** A DLQ entry: the failed message and the last response it got. */
export interface DlqEntry {
  dlqId: string;
  message: StoredMessage;
  error: string | null;
  /** Null when the last attempt got no response (network error, timeout). */
  responseStatus: number | null;
  responseHeaders: Record<string, string[]> | null;
  responseBody: Buffer | null;
  /** The workflow run whose failed step this is (a workflow DLQ entry: a retry resumes it), else null. */
  workflowRunId: string | null;
}

/** Entries by id (any count, no paging), or by filter. */
export type DlqSelection = ({ dlqIds: string[] } | { filter: MessageFilter; responseStatus: number[] | null; range: TimeRange }) & {
  /** Whose entries: another project's are unknown. */
  project: string;
};

/** A page of entries in `order`. */
export interface DlqPage extends Page {
  order: Order;
}

/** Lists the entries `selection` picks, a page at a time. */
export async function listDlq(tx: Tx, selection: DlqSelection, page: DlqPage): Promise<PageOf<DlqEntry>> {
  return selectEntries(tx, selection, page, false);
}

/** One entry of `project`, or a 404. */
export async function findDlqEntry(tx: Tx, project: string, dlqId: string): Promise<DlqEntry> {
  const { items } = await selectEntries(tx, { project, dlqIds: [dlqId] }, FIRST_PAGE, false);
  if (items.length === 0) throw new AppError(404, `DLQ entry ${dlqId} not found`);
  return items[0]!;
}

/** Deletes one entry, or answers 404 when there is none (any more). */
export async function deleteDlqEntry(tx: Tx, project: string, dlqId: string): Promise<void> {
  const deleted = await tx`delete from dispatch.dlq where dlq_id = ${dlqId} and project = ${project} returning dlq_id`;
  if (deleted.length === 0) throw new AppError(404, `DLQ entry ${dlqId} not found`);
}

/** Deletes a page of the entries `selection` picks; returns their ids. */
export async function deleteDlqEntries(tx: Tx, selection: DlqSelection, page: DlqPage): Promise<PageOf<string>> {
  const { items, cursor } = await selectEntries(tx, selection, page, true);
  const ids = items.map((entry) => entry.dlqId);
  await tx`delete from dispatch.dlq where dlq_id = any(${ids}::text[])`;
  return { items: ids, cursor };
}

/** Publish headers of a retry request that override the original's configuration. */

/**
 * Retries a page of the entries `selection` picks: each becomes a new
 * message (new id, no retries done yet), its entry is removed and the failed
 * message names its retry. A retry that turns out a duplicate (a
 * deduplication id given as override) creates nothing and keeps its entry.
 */
export async function retryDlqEntries(
  tx: Tx,
  selection: DlqSelection,
  page: DlqPage,
  overrides: RetryOverrides,
  settings: MessageSettings,
): Promise<PageOf<PublishResult>> {
  const { items, cursor } = await selectEntries(tx, selection, page, true);
  // A failed workflow step continues its run (run-entries.ts); any other entry is published again.
  const ofRuns = await runEntries().ofRuns(tx, selection.project, items.map((entry) => entry.dlqId));
  const resumed =
    ofRuns.size === 0 ? new Map<string, PublishResult>() : await runEntries().resume(tx, selection.project, [...ofRuns], overrides, settings);
  const plain = items.filter((entry) => !ofRuns.has(entry.dlqId));
  const messages = plain.map((entry) => retryMessage(entry.message, overrides, settings.limits));
  const results = await insertMessages(tx, messages, settings);
  const retried = plain.flatMap((entry, index) => (results[index]!.deduplicated ? [] : [{ entry, retry: results[index]!.messageId }]));
  await tx`delete from dispatch.dlq where dlq_id = any(${retried.map(({ entry }) => entry.dlqId)}::text[])`;
  await linkRetries(tx, selection.project, retried.map(({ entry, retry }) => ({ original: entry.message.id, retry })));
  const byEntry = new Map(plain.map((entry, index) => [entry.dlqId, results[index]!]));
  for (const [dlqId, result] of resumed) byEntry.set(dlqId, result);
  return { items: items.flatMap((entry) => byEntry.get(entry.dlqId) ?? []), cursor };
}

/** Retries one entry, or answers 404. */
export async function retryDlqEntry(
  tx: Tx,
  project: string,
  dlqId: string,
  overrides: RetryOverrides,
  settings: MessageSettings,
): Promise<PublishResult> {
  const { items } = await retryDlqEntries(tx, { project, dlqIds: [dlqId] }, FIRST_PAGE, overrides, settings);
  if (items.length === 0) throw new AppError(404, `DLQ entry ${dlqId} not found`);
  return items[0]!;
}

const FIRST_PAGE: DlqPage = { cursor: null, count: 1, order: "earliestFirst" };

/** A row: the entry's columns and its page position. */
type EntryRow = Omit<DlqEntry, "message"> & { messageId: string; position: string };

/**
 * The entries `selection` picks, in `page.order` (by time entered, then id).
 * `lock` takes their row locks: a concurrent retry or delete of the same
 * entry waits, then finds it gone.
 */
async function selectEntries(tx: Tx, selection: DlqSelection, page: DlqPage, lock: boolean) {
  const byIds = "dlqIds" in selection;
  const latestFirst = page.order === "latestFirst";
  const rows = await tx<EntryRow[]>`
    select d.dlq_id as "dlqId", d.message_id as "messageId", d.error, d.response_status as "responseStatus",
      d.response_headers as "responseHeaders", d.response_body as "responseBody", r.run_id as "workflowRunId",
      (extract(epoch from d.created_at) * 1000000)::bigint::text as position
    from dispatch.dlq d join dispatch.messages m on m.project = d.project and m.id = d.message_id
      left join dispatch.workflow_runs r on r.project = d.project and r.dlq_id = d.dlq_id
    where d.project = ${selection.project} and m.project = ${selection.project}
      and ${byIds ? tx`d.dlq_id = any(${selection.dlqIds}::text[])` : matchEntries(tx, selection, page)}
    order by ${latestFirst ? tx`d.created_at desc, d.dlq_id desc` : tx`d.created_at, d.dlq_id`}
    ${byIds ? tx`` : tx`limit ${page.count + 1}`}
    ${lock ? tx`for update of d` : tx``}`;
  const { kept, cursor } = byIds
    ? { kept: rows, cursor: null }
    : pageOf(rows, page.count, (last) => positionCursor(last.position, last.dlqId));
  const messages = new Map((await findMessages(tx, kept.map((row) => row.messageId))).map((m) => [m.id, m]));
  return { items: kept.map(({ messageId, position: _, ...entry }) => ({ ...entry, message: messages.get(messageId)! })), cursor };
}

function matchEntries(tx: Tx, selection: Exclude<DlqSelection, { dlqIds: string[] }>, page: DlqPage): postgres.Fragment {
  const status = selection.responseStatus === null ? tx`true` : tx`d.response_status = any(${selection.responseStatus}::int[])`;
  return tx`${matchMessages(tx, selection.filter)} and ${status}
    and ${withinRange(tx, tx`d.created_at`, selection.range)}
    and ${afterPosition(tx, page.cursor, tx`d.created_at`, tx`d.dlq_id`, page.order === "latestFirst")}`;
}

/**
 * The message a retry publishes: the original's destination, method, headers,
 * body, callbacks, queue, labels and retry policy — as publish headers in the
 * original's dialect, so that `overrides` (in either dialect) replace single
 * settings and everything is validated as a publish is; its redaction fields
 * are the original's and any the overrides add. The original's delay
 * and deduplication id are not carried over: the retry is due now and is not
 * a duplicate of the message it retries.
 */
export function retryMessage(original: StoredMessage, overrides: RetryOverrides, limits: PublishLimits): NewMessage {
  const p = PREFIX[original.dialect].toLowerCase();
  const headers: Record<string, string> = {
    [`${p}method`]: original.method,
    [`${p}retries`]: String(original.maxRetries),
  };
  for (const [name, value] of Object.entries(original.headers)) headers[`${p}forward-${name.toLowerCase()}`] = value;
  if (original.contentType !== null) headers["content-type"] = original.contentType;
  if (original.timeoutMs !== null) headers[`${p}timeout`] = `${Math.ceil(original.timeoutMs / 1000)}s`;
  if (original.retryDelayExpression !== null) headers[`${p}retry-delay`] = original.retryDelayExpression;
  if (original.labels && original.labels.length > 0) headers[`${p}label`] = original.labels.join(",");
  if (original.flowControlKey !== null) {
    headers[`${p}flow-control-key`] = original.flowControlKey;
    headers[`${p}flow-control-value`] = original.flowControlValue ?? "";
  }
  addCallback(headers, p, "callback", original.callback, original.callbackHeaders);
  addCallback(headers, p, "failure-callback", original.failureCallback, original.failureCallbackHeaders);
  const overridePrefix = PREFIX[overrides.dialect].toLowerCase();
  for (const [name, value] of Object.entries(overrides.headers)) {
    if (name.startsWith(overridePrefix)) headers[p + name.slice(overridePrefix.length)] = value;
  }
  const options = parsePublishOptions(headers, original.dialect, limits, overridePrefix);
  const destination = {
    url: original.url,
    topicName: original.topicName,
    endpointName: original.endpointName,
    queueName: original.queueName,
    api: original.api,
  };
  const retry = buildMessage(options, destination, original.body, {
    project: original.project,
    origin: "publish",
    sourceMessageId: null,
    callerIp: original.callerIp,
    scheduleId: original.scheduleId,
    // A retry from the DLQ goes on in the original's trace.
    traceparent: original.traceparent,
  });
  // The retry delivers the originals and hides what the original hid; an override can only add fields.
  retry.redactFields = unionFields(original.redactFields, retry.redactFields);
  return retry;
}

/** `<p><kind>` and its `<p><kind>-X` settings, from the callback's stored publish headers (`<P>X`). */
function addCallback(
  headers: Record<string, string>,
  p: string,
  kind: "callback" | "failure-callback",
  url: string | null,
  stored: Record<string, string> | null,
): void {
  if (url === null) return;
  headers[p + kind] = url;
  for (const [name, value] of Object.entries(stored ?? {})) {
    const lower = name.toLowerCase();
    if (lower.startsWith(p)) headers[`${p}${kind}-${lower.slice(p.length)}`] = value;
  }
}
