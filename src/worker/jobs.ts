/**
 * The only place that hands work to graphile-worker. Jobs carry message ids,
 * never bodies; `add_jobs` runs as SQL inside the caller's transaction, so a
 * rollback leaves no job and a commit wakes a worker through one NOTIFY.
 */
import type { Tx } from "../db/client";

/** Task that attempts one delivery of a message. */
export const DELIVER_TASK = "deliver";

/** Schedules a delivery attempt for each message at its `next_delivery_at`. */
export async function scheduleDeliveries(tx: Tx, messageIds: string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await tx`
    select count(*) from graphile_worker.add_jobs(array(
      select row(${DELIVER_TASK}, json_build_object('id', m.id), null, m.next_delivery_at, null, null, null, null)::graphile_worker.job_spec
      from dispatch.messages m
      where m.id = any(${messageIds}::text[])
    ))`;
}
