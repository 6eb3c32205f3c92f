/**
 * The common outcome, in one autocommit statement for a whole batch: the
 * messages become DELIVERED (a HOT update: no index names the columns it
 * changes), each attempt gets its row in the attempt log, and claims whose
 * every attempt is recorded are dropped. A message changes only while it is
 * still pending under the claim that made the attempt (a cancel or a
 * redelivery after a sweep wins); its attempt is logged either way. On
 * Citus the same is done for one project's batch, and its finished claims,
 * by a call its node runs (db/citus/delegated.ts), under attempt ids taken
 * on the coordinator beforehand.
 */
import { byProject } from "../citus/by-project";
import type { DelegatedFunction } from "../citus/delegated";
import type { Tx } from "../client";
import { isPending, pendingSql } from "../vocabulary";
import { type ClaimedKey, updateClaimed } from "./work-list";

/** A successful attempt of a message under a claim. */
export interface DeliveredAttempt {
  messageId: string;
  /** The message's project, written on its attempt. */
  project: string;
  claimId: number;
  /** Retries done before the attempt. */
  retried: number;
  startedAt: Date;
  durationMs: number;
  status: number;
}

/**
 * Records one delivery whose consequences the caller records in the same
 * transaction (a queued message frees its slot, a callback, a failure
 * function: domain/delivery/outcome.ts); false when a cancel or a sweep got
 * there first.
 */
export function recordDeliveredMessage(tx: Tx, claimed: ClaimedKey): Promise<boolean> {
  return updateClaimed(tx, claimed, tx`state = 'DELIVERED', completed_at = now(), pending_queue = null`);
}

/** Records `attempts`, drops the claims `releasedClaims`; returns the ids that changed state. */
export async function recordDelivered(sql: Tx, attempts: DeliveredAttempt[], releasedClaims: number[]): Promise<string[]> {
  const [row] = await sql<{ ids: string[] }[]>`
    with o as (
      select * from unnest(${attempts.map((a) => a.messageId)}::text[], ${attempts.map((a) => a.project)}::text[],
        ${attempts.map((a) => a.claimId)}::bigint[],
        ${attempts.map((a) => a.retried)}::int[], ${attempts.map((a) => a.startedAt.toISOString())}::timestamptz[],
        ${attempts.map((a) => a.durationMs)}::int[], ${attempts.map((a) => a.status)}::int[])
        with ordinality as o(id, project, claim_id, retried, started_at, duration_ms, status, n)),
    delivered as (
      update dispatch.messages m set state = 'DELIVERED', completed_at = now()
      from o where m.id = o.id and m.claim_id = o.claim_id and ${isPending(sql, "m.state")}
      returning m.id),
    logged as (
      insert into dispatch.attempts (message_id, project, retried, started_at, duration_ms, result, response_status)
      select o.id, o.project, o.retried, o.started_at, o.duration_ms, 'DELIVERED', o.status from o order by o.n),
    released as (delete from dispatch.claims where id = any(${releasedClaims}::bigint[]))
    select array(select id from delivered) as ids`;
  return row!.ids;
}

/**
 * `recordDeliveredOnNode`'s function, made on Citus by db/citus/delegated.ts: what `recordDelivered` does
 * on one server, for one project's batch under attempt ids taken on the coordinator, and the project's
 * claims `p_released` dropped.
 */
export const RECORD_DELIVERED_ON_NODE: DelegatedFunction = {
  signature: "dispatch.record_delivered_on_node(text, text[], bigint[], bigint[], int[], timestamptz[], int[], int[], bigint[])",
  definition: `
create or replace function dispatch.record_delivered_on_node(
  p_project text, p_message_ids text[], p_claim_ids bigint[], p_attempt_ids bigint[],
  p_retried int[], p_started_at timestamptz[], p_duration_ms int[], p_status int[], p_released bigint[])
returns text[] language plpgsql as $function$
declare changed text[];
begin
  delete from dispatch.claims where project = p_project and id = any(p_released);
  with delivered as (
    update dispatch.messages m set state = 'DELIVERED', completed_at = now()
    from unnest(p_message_ids, p_claim_ids) as o(id, claim_id)
    where m.project = p_project and m.id = o.id and m.claim_id = o.claim_id and ${pendingSql("m.state")}
    returning m.id)
  select array(select id from delivered) into changed;
  -- The ids were taken on the coordinator, whose sequence orders the attempt log: a call made again after
  -- its answer was lost logs nothing twice.
  insert into dispatch.attempts (id, message_id, project, retried, started_at, duration_ms, result, response_status)
    select o.id, o.message_id, p_project, o.retried, o.started_at, o.duration_ms, 'DELIVERED', o.status
    from unnest(p_attempt_ids, p_message_ids, p_retried, p_started_at, p_duration_ms, p_status)
      as o(id, message_id, retried, started_at, duration_ms, status)
    order by o.id
  on conflict do nothing;
  return changed;
end
$function$`,
};

/** The record function's signature before it dropped claims (db/citus/delegated.ts drops it). */
export const RECORD_DELIVERED_ON_NODE_BEFORE = "dispatch.record_delivered_on_node(text, text[], bigint[], bigint[], int[], timestamptz[], int[], int[])";

/** Citus: takes `count` ids for attempts from the sequence that orders the attempt log, on the coordinator. */
export async function takeAttemptIds(sql: Tx, count: number): Promise<number[]> {
  const [row] = await sql<{ ids: number[] }[]>`
    select array(select nextval('dispatch.messages_seq_seq') from generate_series(1, ${count}::int)) as ids`;
  return row!.ids.map(Number);
}

/**
 * Citus: records `attempts`, all of one project, under the ids `attemptIds`
 * (`takeAttemptIds`), and drops that project's claims `releasedClaims`, in one
 * call the coordinator delegates to the project's node (db/citus/delegated.ts);
 * returns the ids that changed state. Made again with the same ids after a lost
 * answer, it logs nothing twice.
 */
export async function recordDeliveredOnNode(
  sql: Tx,
  attempts: DeliveredAttempt[],
  attemptIds: number[],
  releasedClaims: number[],
): Promise<string[]> {
  const [row] = await sql<{ ids: string[] }[]>`
    select dispatch.record_delivered_on_node(${attempts[0]!.project}, ${attempts.map((a) => a.messageId)}::text[],
      ${attempts.map((a) => a.claimId)}::bigint[], ${attemptIds}::bigint[], ${attempts.map((a) => a.retried)}::int[],
      ${attempts.map((a) => a.startedAt.toISOString())}::timestamptz[], ${attempts.map((a) => a.durationMs)}::int[],
      ${attempts.map((a) => a.status)}::int[], ${releasedClaims}::bigint[]) as ids`;
  return row!.ids;
}

/** A claim whose every attempt is recorded, with the project its messages are of (null: several, one server). */
export interface FinishedClaim {
  id: number;
  project: string | null;
}

/**
 * Drops finished claims: one statement by id on one server; on Citus one per project, each routed to the
 * project's node (a statement naming no project would open every shard).
 */
export async function dropFinishedClaims(sql: Tx, claims: FinishedClaim[], distributed: boolean): Promise<void> {
  if (!distributed) return void (await sql`delete from dispatch.claims where id = any(${claims.map((c) => c.id)}::bigint[])`);
  // Every claim on Citus names its project (claim-by-project.ts); a claim without one would only wait for the sweep.
  for (const [project, ids] of byProject(claims, (c) => c.project ?? "")) {
    await sql`delete from dispatch.claims where project = ${project} and id = any(${ids.map((c) => c.id)}::bigint[])`;
  }
}
