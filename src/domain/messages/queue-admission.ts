/**
 * Queue admission (docs/interface.md "Queue"): which queued messages may be
 * attempted. A message is started — put on the engine's work list — while
 * its queue is active and holds fewer started, unfinished messages than its
 * parallelism; the queue row's lock orders every replica's decisions.
 * Publishing, finishing or cancelling a queued message and changing a queue
 * call `startQueuedMessages`.
 */
import type { Tx } from "../../db/client";
import { startQueuedMessageRows } from "../../db/queries/start-queued-messages";

/**
 * Creates missing queues (parallelism 1, active) and locks all of them, in
 * name order so that concurrent publishers cannot deadlock.
 */
export async function lockQueues(tx: Tx, names: string[]): Promise<void> {
  if (names.length === 0) return;
  const sorted = [...new Set(names)].sort();
  await tx`insert into dispatch.queues (name) select unnest(${sorted}::text[]) on conflict (name) do nothing`;
  await tx`select name from dispatch.queues where name = any(${sorted}::text[]) order by name for update`;
}

/** Starts as many waiting messages of `queueName` as its free slots allow (none while paused). */
export async function startQueuedMessages(tx: Tx, queueName: string): Promise<void> {
  const [queue] = await tx<{ parallelism: number; paused: boolean }[]>`
    select parallelism, paused from dispatch.queues where name = ${queueName} for update`;
  if (!queue || queue.paused) return;
  await startQueuedMessageRows(tx, queueName, queue.parallelism);
}
