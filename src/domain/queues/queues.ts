/**
 * Queues: ordered delivery with bounded parallelism, across any number of
 * worker processes (docs/interface.md "Queue", docs/hosted-api.md §3.2, §6).
 *
 * A queued message is not on the engine's work list when it is stored. It
 * is *started* — made due — only while its queue is active and fewer than
 * `parallelism` of its messages are started and unfinished; started messages
 * keep their slot through their retries. Starting happens under the queue
 * row's lock, so every replica agrees; messages start in publish order
 * (`seq`). The claim passes over the messages of a paused queue: they keep
 * their slot and are sent, first in line, once it resumes. A queue is its
 * project's: every function here sees and changes the queues of `project` only.
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import { AppError, badRequest, overLimit } from "../errors";
import { cancelMessages } from "../messages/cancel";
import { startQueuedMessages } from "../messages/queue-admission";
import { afterKey, keyPageOf, type Page, type PageOf } from "../paging";

/** A queue as the API shows it. */
export interface Queue {
  name: string;
  parallelism: number;
  paused: boolean;
  lag: number;
  createdAt: Date;
  updatedAt: Date;
}

const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** A valid queue name, or a 400. */
export function checkQueueName(name: string): string {
  if (!NAME.test(name)) throw badRequest(`invalid queue name "${name}": use 1-100 letters, digits, ".", "_" or "-"`);
  return name;
}

/** A queue's parallelism: a whole number from 1 to `max` (DISPATCH_MAX_QUEUE_PARALLELISM); a 400 or a 412 otherwise. */
export function checkQueueParallelism(parallelism: number, max: number): number {
  if (!Number.isSafeInteger(parallelism) || parallelism < 1) throw badRequest(`parallelism must be a whole number of at least 1, got ${parallelism}`);
  if (parallelism > max) throw overLimit(`parallelism must be at most ${max}, got ${parallelism}`, "DISPATCH_MAX_QUEUE_PARALLELISM");
  return parallelism;
}

/** Creates or updates a queue; a lower parallelism lets started messages finish. */
export async function upsertQueue(tx: Tx, project: string, name: string, parallelism: number, paused: boolean): Promise<void> {
  await tx`
    insert into dispatch.queues (project, name, parallelism, paused)
    values (${project}, ${checkQueueName(name)}, ${parallelism}, ${paused})
    on conflict (project, name) do update set parallelism = excluded.parallelism, paused = excluded.paused,
      updated_at = excluded.updated_at`;
  await startQueuedMessages(tx, { project, name });
}

/** Pauses (idempotently) or resumes a queue; resuming starts what waited. */
export async function setQueuePaused(tx: Tx, project: string, name: string, paused: boolean): Promise<void> {
  const [row] = await tx`
    update dispatch.queues set paused = ${paused}, updated_at = now() where project = ${project} and name = ${name} returning name`;
  if (!row) throw new AppError(404, `queue ${name} not found`);
  if (!paused) await startQueuedMessages(tx, { project, name });
}

/**
 * Deletes a queue, cancelling what still waits in it (each cancel is in the
 * message's log); an unknown name changes nothing (§16 #24). Its messages are
 * locked before the queue, in id order, as every transaction that takes both
 * does (a recorded outcome holds its message, then starts the queue's next):
 * a delete beside a delivery of the queue waits for it instead of
 * deadlocking. Once the queue is locked no message can join it, so a second
 * look takes those enqueued in between.
 */
export async function deleteQueue(tx: Tx, project: string, name: string): Promise<void> {
  const queue = tx`project = ${project} and name = ${name}`;
  const lockMessages = () => tx<{ id: string }[]>`
    select id from dispatch.messages where project = ${project} and pending_queue = ${name} order by id for update`;
  await lockMessages();
  const [row] = await tx`select 1 from dispatch.queues where ${queue} for update`;
  if (!row) return;
  const waiting = await lockMessages();
  await tx`update dispatch.queues set paused = true where ${queue}`;
  await cancelMessages(tx, project, waiting.map((message) => message.id));
  await tx`delete from dispatch.queues where ${queue}`;
}

/** Lists the project's queues (or the one named) with their lag: messages not yet finished. */
export function listQueues(tx: Tx, project: string, name?: string): Promise<Queue[]> {
  return selectQueues(tx, project, name === undefined ? tx`true` : tx`q.name = ${name}`, tx``);
}

/** A page of the project's queues in name order: those named after `page.cursor` (a queue name), with their lag. */
export async function queuePage(tx: Tx, project: string, page: Page): Promise<PageOf<Queue>> {
  const rows = await selectQueues(tx, project, afterKey(tx, page.cursor, tx`q.name`), tx`limit ${page.count + 1}`);
  return keyPageOf(rows, page.count, (queue) => queue.name);
}

/** The project's queues `which` picks, by name, and their lag (counted for the rows returned only). */
function selectQueues(tx: Tx, project: string, which: postgres.Fragment, limit: postgres.Fragment): Promise<Queue[]> {
  return tx<Queue[]>`
    select q.name, q.parallelism, q.paused, q.created_at as "createdAt", q.updated_at as "updatedAt",
      (select count(*)::int from dispatch.messages m where m.project = q.project and m.pending_queue = q.name) as lag
    from dispatch.queues q
    where q.project = ${project} and ${which}
    order by q.name ${limit}`;
}
