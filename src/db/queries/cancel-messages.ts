/**
 * Cancelling: a message that has not finished leaves the work list for good,
 * CANCELED at `canceled_seq` (its log shows CANCEL_REQUESTED then CANCELED).
 * Only pending messages change (work-list.ts); an attempt already in flight
 * may still land, and is then logged without changing the state.
 */
import type { Tx } from "../client";
import { isPending } from "../vocabulary";

/**
 * Cancels those of `ids` (of `project`) that are pending; returns them with their queues. Their
 * `canceled_seq` positions are taken first, one per id (Citus refuses `nextval()` in an UPDATE of a
 * distributed table; a position left unused is a gap, as a rolled-back one is).
 */
export async function cancelMessageRows(
  tx: Tx,
  project: string,
  ids: string[],
): Promise<{ id: string; project: string; queueName: string | null }[]> {
  if (ids.length === 0) return [];
  const sorted = [...ids].sort();
  const [row] = await tx<{ positions: number[] }[]>`
    select array(select nextval('dispatch.messages_seq_seq') from generate_series(1, ${sorted.length}::int)) as positions`;
  return tx<{ id: string; project: string; queueName: string | null }[]>`
    update dispatch.messages m
    set state = 'CANCELED', completed_at = now(), due_at = null, pending_queue = null, flow_parked = false, destination_parked = false,
      canceled_seq = c.position
    from unnest(${sorted}::text[], ${row!.positions}::bigint[]) as c(id, position)
    where m.project = ${project} and m.id = c.id and ${isPending(tx, "m.state")}
    returning m.id, m.project, m.queue_name as "queueName"`;
}
