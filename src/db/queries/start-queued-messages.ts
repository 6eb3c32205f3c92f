/**
 * Queue admission: starts as many waiting messages of a queue as its free
 * slots allow, in publish order, putting them on the work list (and waking
 * the workers for the earliest of them). The caller holds the queue row's lock,
 * so every replica agrees on the count; waiting messages locked by another
 * transaction (a cancel) are skipped.
 */
import type { Tx } from "../client";
import { notifyDueAt } from "./work-list";

/** Starts up to `parallelism` minus the started-and-unfinished messages of `project`'s queue `queueName`; returns how many. */
export async function startQueuedMessageRows(tx: Tx, project: string, queueName: string, parallelism: number): Promise<number> {
  const [row] = await tx<{ count: number; dueAt: Date | null }[]>`
    with busy as (
      select count(*) as n from dispatch.messages where project = ${project} and pending_queue = ${queueName} and queue_started),
    next as (
      select id from dispatch.messages
      where project = ${project} and pending_queue = ${queueName} and not queue_started
      order by seq
      limit greatest(0, ${parallelism} - (select n from busy))
      for update skip locked),
    started as (
      update dispatch.messages m
      set queue_started = true, next_delivery_at = greatest(m.next_delivery_at, now()),
        due_at = greatest(m.next_delivery_at, now())
      from next where m.project = ${project} and m.id = next.id
      returning m.due_at)
    select count(*)::int as count, min(due_at) as "dueAt" from started`;
  if (row!.count > 0) await notifyDueAt(tx, row!.dueAt!);
  return row!.count;
}
