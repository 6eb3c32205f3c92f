/**
 * Queue admission (docs/interface.md "Queue"): which queued messages may be
 * attempted. A message is started — put on the engine's work list — while
 * its queue is active and holds fewer started, unfinished messages than its
 * parallelism; the queue row's lock orders every replica's decisions.
 * Publishing, finishing or cancelling a queued message and changing a queue
 * call `startQueuedMessages`.
 */
import { byProject } from "../../db/citus/by-project";
import type { Tx } from "../../db/client";
import { startQueuedMessageRows } from "../../db/queries/start-queued-messages";

/** A queue: its name, in its project (two projects may each have a queue of one name). */
export interface QueueKey {
  project: string;
  name: string;
}

/** The distinct queues of `keys`, in (project, name) order: the order every transaction locks them in. */
export function sortedQueues(keys: QueueKey[]): QueueKey[] {
  const distinct = new Map(keys.map((key) => [`${key.project}\0${key.name}`, key]));
  return [...distinct.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, key]) => key);
}

/**
 * Creates missing queues (parallelism 1, active) and locks all of them, in
 * (project, name) order so that concurrent publishers cannot deadlock.
 */
export async function lockQueues(tx: Tx, keys: QueueKey[]): Promise<void> {
  if (keys.length === 0) return;
  // Project by project (db/citus/by-project.ts), names in order within each.
  for (const [project, queues] of byProject(sortedQueues(keys), (key) => key.project)) {
    const names = queues.map((key) => key.name);
    await tx`
      insert into dispatch.queues (project, name) select ${project}, name from unnest(${names}::text[]) as k(name)
      on conflict (project, name) do nothing`;
    await tx`select q.name from dispatch.queues q where q.project = ${project} and q.name = any(${names}::text[]) order by q.name for update`;
  }
}

/** Starts as many waiting messages of the queue as its free slots allow (none while paused). */
export async function startQueuedMessages(tx: Tx, queue: QueueKey): Promise<void> {
  const [row] = await tx<{ parallelism: number; paused: boolean }[]>`
    select parallelism, paused from dispatch.queues where project = ${queue.project} and name = ${queue.name} for update`;
  if (!row || row.paused) return;
  await startQueuedMessageRows(tx, queue.project, queue.name, row.parallelism);
}
