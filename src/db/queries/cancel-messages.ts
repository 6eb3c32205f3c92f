/**
 * Cancelling: a message that has not finished leaves the work list for good,
 * CANCELED at `canceled_seq` (its log shows CANCEL_REQUESTED then CANCELED).
 * Only pending messages change (work-list.ts); an attempt already in flight
 * may still land, and is then logged without changing the state.
 */
import type { Tx } from "../client";
import { isPending } from "../vocabulary";

/** Cancels those of `ids` that are pending; returns them with their queues (and the queues' project). */
export function cancelMessageRows(tx: Tx, ids: string[]): Promise<{ id: string; project: string; queueName: string | null }[]> {
  return tx<{ id: string; project: string; queueName: string | null }[]>`
    update dispatch.messages
    set state = 'CANCELED', completed_at = now(), due_at = null, pending_queue = null, flow_parked = false, destination_parked = false,
      canceled_seq = nextval('dispatch.messages_seq_seq')
    where id = any(${ids}::text[]) and ${isPending(tx)}
    returning id, project, queue_name as "queueName"`;
}
