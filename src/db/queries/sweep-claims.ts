/**
 * Crash recovery for claims: the claims of workers whose heartbeat stopped
 * for `deadAfterMs` are dropped, and their messages that are still pending
 * and unfinished under that claim become due again at once (the workers are woken).
 */
import type postgres from "postgres";
import type { Tx } from "../client";
import { isPending } from "../vocabulary";
import { notifyDue } from "./work-list";

/** Sweeps dead workers' claims; returns how many messages became due again. */
export function sweepDeadClaims(sql: Tx, deadAfterMs: number): Promise<number> {
  return dropClaims(
    sql,
    sql`c.claimed_at < now() - ${deadAfterMs} * interval '1 millisecond'
      and not exists (
        select 1 from dispatch.workers w
        where w.id = c.worker_id and w.heartbeat_at > now() - ${deadAfterMs} * interval '1 millisecond')`,
  );
}

/**
 * `sweepDeadClaims` on Citus, where claims are on the nodes beside their messages and the heartbeats on the
 * coordinator, which one statement may not join: the silent workers are read from the coordinator's
 * `workers` (its own table: no node is asked), and only when there are some are their claims dropped across
 * the nodes. With `everyClaim`, the claims of workers that have no row at all are dropped too (a row
 * forgotten while its worker registered a claim, or a restore's): every node is asked, so the caller does
 * it now and then. Returns how many messages became due again.
 */
export async function sweepDeadClaimsAcrossNodes(sql: Tx, deadAfterMs: number, everyClaim: boolean): Promise<number> {
  const [workers] = await sql<{ silent: string[]; live: string[] }[]>`
    select coalesce(array_agg(id) filter (where heartbeat_at <= now() - ${deadAfterMs} * interval '1 millisecond'), '{}') as silent,
      coalesce(array_agg(id) filter (where heartbeat_at > now() - ${deadAfterMs} * interval '1 millisecond'), '{}') as live
    from dispatch.workers`;
  const old = sql`c.claimed_at < now() - ${deadAfterMs} * interval '1 millisecond'`;
  if (everyClaim) return dropClaims(sql, sql`${old} and c.worker_id <> all(${workers!.live}::text[])`);
  if (workers!.silent.length === 0) return 0;
  return dropClaims(sql, sql`${old} and c.worker_id = any(${workers!.silent}::text[])`);
}

/**
 * Drops this worker's claims other than `known` and makes their unfinished
 * messages due again: a claim whose statement committed while its answer was
 * lost (a connection dropped at that moment) is held by a live worker that
 * never heard of it. Returns how many messages became due again.
 */
export function releaseUnknownClaims(sql: Tx, workerId: string, known: number[]): Promise<number> {
  return dropClaims(sql, sql`c.worker_id = ${workerId} and c.id <> all(${known}::bigint[])`);
}

/**
 * Drops the claims that name no project and makes their unfinished messages due again: on Citus, claims
 * are distributed on their project (db/citus/layout.ts), so those taken before cannot be kept.
 */
export function releaseClaimsWithoutProject(sql: Tx): Promise<number> {
  return dropClaims(sql, sql`c.project is null`);
}

/** Drops the claims `c` that `which` selects; their messages still pending under them become due now. */
async function dropClaims(sql: Tx, which: postgres.Fragment): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    with dropped as (delete from dispatch.claims c where ${which} returning c.id, c.message_ids),
    orphans as (select d.id as claim_id, unnest(d.message_ids) as message_id from dropped d),
    requeued as (
      update dispatch.messages m set due_at = now(), flow_active = false
      from orphans o
      where m.id = o.message_id and m.claim_id = o.claim_id and m.due_at is null and ${isPending(sql, "m.state")}
      returning m.id)
    select count(*)::int as count from requeued`;
  if (row!.count > 0) await notifyDue(sql);
  return row!.count;
}

/** Puts claimed, unfinished messages back on the work list after `delayMs` (a worker hands back what it will not attempt). */
export async function releaseClaimedMessages(
  sql: Tx,
  claims: { messageId: string; claimId: number }[],
  delayMs = 0,
): Promise<void> {
  if (claims.length === 0) return;
  const released = await sql`
    update dispatch.messages m set due_at = now() + ${delayMs} * interval '1 millisecond', flow_active = false
    from unnest(${claims.map((c) => c.messageId)}::text[], ${claims.map((c) => c.claimId)}::bigint[]) as o(id, claim_id)
    where m.id = o.id and m.claim_id = o.claim_id and m.due_at is null and ${isPending(sql, "m.state")}`;
  if (released.count > 0) await notifyDue(sql, delayMs);
}
