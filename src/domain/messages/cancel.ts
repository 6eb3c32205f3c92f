/** Cancelling messages (docs/hosted-api.md §3.2, §4). */
import type { Sql, Tx } from "../../db/client";
import { cancelMessageRows } from "../../db/queries/cancel-messages";
import { isPending } from "../../db/vocabulary";
import { matchMessages, type MessageFilter, type TimeRange, withinRange } from "./filter";
import { sortedQueues, startQueuedMessages } from "./queue-admission";

/**
 * What a bulk cancel selects: messages by id, or every pending message a
 * filter matches (created within `range`). An empty filter matches every
 * pending message.
 */
export type CancelSelection = ({ messageIds: string[] } | { filter: MessageFilter; range: TimeRange }) & {
  /** Whose messages: another project's are left alone. */
  project: string;
};

/** How many messages one transaction of a filtered cancel takes. */
const CANCEL_BATCH = 500;

/**
 * Cancels the messages `selection` picks; returns how many were cancelled.
 * A filtered cancel takes every match that existed when it began, as the
 * hosted service does in one call (its `count` is a legacy parameter it
 * ignores: docs/hosted-api.md §4), in batches of 500, each its own
 * transaction, oldest first; messages published meanwhile are left alone.
 */
export async function cancelSelected(sql: Sql, selection: CancelSelection): Promise<number> {
  if ("messageIds" in selection) return sql.begin(async (tx) => cancelMessages(tx, selection.project, await ownIds(tx, selection.project, selection.messageIds)));
  const range = { ...selection.range, toDate: Math.min(selection.range.toDate ?? Date.now(), Date.now()) };
  let total = 0;
  for (;;) {
    const cancelled = await sql.begin((tx) => cancelBatch(tx, selection.project, selection.filter, range));
    total += cancelled;
    if (cancelled < CANCEL_BATCH) return total;
  }
}

/** Those of `ids` that are `project`'s messages. */
async function ownIds(tx: Tx, project: string, ids: string[]): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`select id from dispatch.messages where id = any(${ids}::text[]) and project = ${project}`;
  return rows.map((row) => row.id);
}

async function cancelBatch(tx: Tx, project: string, filter: MessageFilter, range: TimeRange): Promise<number> {
  const pending = await tx<{ id: string }[]>`
    select m.id from dispatch.messages m
    where m.project = ${project} and ${isPending(tx, "m.state")}
      and ${matchMessages(tx, filter)}
      and ${withinRange(tx, tx`m.created_at`, range)}
    order by m.seq
    limit ${CANCEL_BATCH}`;
  return cancelMessages(tx, project, pending.map((row) => row.id));
}

/**
 * Cancels a message that has not finished; its log shows CANCEL_REQUESTED
 * then CANCELED at `canceled_seq`. It leaves the work list, so nothing more
 * is sent; an attempt already in
 * flight may still land (docs/hosted-api.md §3.2). Returns how many were cancelled.
 */
export async function cancelMessages(tx: Tx, project: string, ids: string[]): Promise<number> {
  const cancelled = await cancelMessageRows(tx, project, ids);
  if (cancelled.length === 0) return 0;
  // A cancelled message that held a queue slot frees it.
  const queues = sortedQueues(cancelled.flatMap((row) => (row.queueName === null ? [] : [{ project: row.project, name: row.queueName }])));
  for (const queue of queues) await startQueuedMessages(tx, queue);
  return cancelled.length;
}
