/** Cancelling messages (docs/hosted-api.md §3.2, §4). */
import type { Tx } from "../../db/client";
import { isPending } from "../../db/vocabulary";
import { matchMessages, type MessageFilter, type TimeRange, withinRange } from "./filter";
import { startQueuedMessages } from "./queue-admission";

/**
 * What a bulk cancel selects: messages by id, or the pending messages a
 * filter matches (created within `range`), at most `count`, oldest first. An
 * empty filter matches every pending message.
 */
export type CancelSelection = { messageIds: string[] } | { filter: MessageFilter; range: TimeRange; count: number };

/** Cancels the messages `selection` picks; returns how many were cancelled. */
export async function cancelSelected(tx: Tx, selection: CancelSelection): Promise<number> {
  if ("messageIds" in selection) return cancelMessages(tx, selection.messageIds);
  const pending = await tx<{ id: string }[]>`
    select m.id from dispatch.messages m
    where ${isPending(tx, "m.state")}
      and ${matchMessages(tx, selection.filter)}
      and ${withinRange(tx, tx`m.created_at`, selection.range)}
    order by m.seq
    limit ${selection.count}`;
  return cancelMessages(tx, pending.map((row) => row.id));
}

/**
 * Cancels a message that has not finished; its log shows CANCEL_REQUESTED
 * then CANCELED at `canceled_seq`. It leaves the work list, so nothing more
 * is sent; an attempt already in
 * flight may still land (docs/hosted-api.md §3.2). Returns how many were cancelled.
 */
export async function cancelMessages(tx: Tx, ids: string[]): Promise<number> {
  const cancelled = await tx<{ id: string; queueName: string | null }[]>`
    update dispatch.messages
    set state = 'CANCELED', completed_at = now(), due_at = null, pending_queue = null, flow_parked = false,
      canceled_seq = nextval('dispatch.messages_seq_seq')
    where id = any(${ids}::text[]) and ${isPending(tx)}
    returning id, queue_name as "queueName"`;
  if (cancelled.length === 0) return 0;
  // A cancelled message that held a queue slot frees it.
  const queues = new Set(cancelled.flatMap((row) => (row.queueName === null ? [] : [row.queueName])));
  for (const name of [...queues].sort()) await startQueuedMessages(tx, name);
  return cancelled.length;
}
