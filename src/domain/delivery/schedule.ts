/**
 * How work reaches the engine: the only place that hands jobs to
 * graphile-worker (deliveries and workflow wait timeouts). Jobs carry ids,
 * never bodies; `add_jobs` runs as SQL inside the caller's transaction, so a
 * rollback leaves no job and a commit wakes a worker through one NOTIFY.
 *
 * Only attempts due within the engine horizon get a job now; later ones wait
 * in `dispatch.messages` (job_scheduled = false) until `promoteDueMessages`
 * hands them over, so a large backlog of future messages never bloats the
 * engine's hot table (PERFORMANCE.md trap 3).
 */
import type { Tx } from "../../db/client";

/** Task that attempts one delivery of a message. */
export const DELIVER_TASK = "deliver";

/** How far ahead attempts are handed to the engine. */
export const ENGINE_HORIZON_MS = 30_000;

/**
 * Schedules the next attempt of each message at its `next_delivery_at`: a job
 * now when due within the horizon, else later through the promoter.
 */
export async function scheduleDeliveries(tx: Tx, messageIds: string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await tx`
    with handed as (
      update dispatch.messages
      set job_scheduled = next_delivery_at < now() + ${ENGINE_HORIZON_MS} * interval '1 millisecond'
      where id = any(${messageIds}::text[])
      returning id, next_delivery_at, job_scheduled)
    ${addHandedJobs(tx)}`;
}

/**
 * Hands attempts coming due within the horizon to the engine, at most
 * `limit` per call; returns how many. Safe to run from every worker process
 * at once (SKIP LOCKED).
 */
export async function promoteDueMessages(tx: Tx, limit: number): Promise<number> {
  const [row] = await tx<{ count: number }[]>`
    with due as (
      select id from dispatch.messages
      where state in ('CREATED', 'RETRY') and not job_scheduled and (queue_name is null or queue_started)
        and next_delivery_at < now() + ${ENGINE_HORIZON_MS} * interval '1 millisecond'
      order by next_delivery_at
      limit ${limit}
      for update skip locked),
    handed as (
      update dispatch.messages m set job_scheduled = true from due where m.id = due.id
      returning m.id, m.next_delivery_at, m.job_scheduled)
    ${addHandedJobs(tx)}`;
  return row!.count;
}

/**
 * `select count` adding a deliver job for each row of the `handed` CTE whose
 * `job_scheduled` is set. add_jobs sends a NOTIFY even for no jobs, and a
 * NOTIFY serialises commits, so it is only called when there are rows.
 */
export function addHandedJobs(tx: Tx) {
  return tx`
    select case when exists (select 1 from handed where job_scheduled) then (
      select count(*)::int from graphile_worker.add_jobs(array(
        select row(${DELIVER_TASK}, json_build_object('id', id), null, next_delivery_at, null, null, null, null)::graphile_worker.job_spec
        from handed where job_scheduled))
    ) else 0 end as count`;
}

/** Task that fires a workflow waiter's timeout. */
export const WAIT_TIMEOUT_TASK = "wait_timeout";

/** Schedules the timeout of waiter `waiterId` at `deadline` (keyed, so it can be removed). */
export async function scheduleWaitTimeout(tx: Tx, waiterId: number, deadline: Date): Promise<void> {
  await tx`
    select graphile_worker.add_job(${WAIT_TIMEOUT_TASK}, json_build_object('waiterId', ${waiterId}::bigint),
      run_at := ${deadline}, job_key := ${waitTimeoutKey(waiterId)})`;
}

/** Removes the timeout of a waiter that was resolved first. */
export async function cancelWaitTimeout(tx: Tx, waiterId: number): Promise<void> {
  await tx`select graphile_worker.remove_job(${waitTimeoutKey(waiterId)})`;
}

const waitTimeoutKey = (waiterId: number) => `wait:${waiterId}`;
