/** Cancelling messages (compat-api.md §3.2, §4). */
import type { Tx } from "../db/client";
import { startQueuedMessages } from "./queues";

/**
 * Cancels a message that has not finished: CANCEL_REQUESTED then CANCELED.
 * Its pending job finds it cancelled and sends nothing; an attempt already in
 * flight may still land (compat-api.md §3.2). Returns how many were cancelled.
 */
export async function cancelMessages(tx: Tx, ids: string[]): Promise<number> {
  const cancelled = await tx<{ id: string; queueName: string | null }[]>`
    update dispatch.messages set state = 'CANCELED', completed_at = now()
    where id = any(${ids}::text[]) and state in ('CREATED', 'RETRY')
    returning id, queue_name as "queueName"`;
  if (cancelled.length === 0) return 0;
  await tx`
    insert into dispatch.message_events (message_id, state)
    select id, s.state
    from unnest(${cancelled.map((row) => row.id)}::text[]) as id
    cross join (values (1, 'CANCEL_REQUESTED'), (2, 'CANCELED')) as s(n, state)
    order by id, s.n`;
  // A cancelled message that held a queue slot frees it.
  const queues = new Set(cancelled.flatMap((row) => (row.queueName === null ? [] : [row.queueName])));
  for (const name of [...queues].sort()) await startQueuedMessages(tx, name);
  return cancelled.length;
}
