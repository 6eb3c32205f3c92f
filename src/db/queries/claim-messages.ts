/**
 * The claim: a worker takes up to `limit` due messages in one statement.
 * Rows come off the work list (`due_at` cleared) under a new claim, and the
 * claim is registered for the worker, whose heartbeat keeps it alive
 * (`sweep-claims.ts` frees the claims of a dead worker). SKIP LOCKED lets any
 * number of workers claim at once; messages of paused queues are passed over
 * and keep their slot until the queue resumes.
 */
import type { Tx } from "../client";
import { type MessageRow, messageColumns } from "../message-columns";

/** A message held under a claim: its `claimId` is set. */
export type ClaimedMessage = MessageRow & { claimId: number };

/** Claims up to `limit` due messages for `workerId`. */
export function claimMessages(tx: Tx, workerId: string, limit: number): Promise<ClaimedMessage[]> {
  return tx<ClaimedMessage[]>`
    with picked as (
      select m.id from dispatch.messages m
      where m.due_at <= now()
        and (m.queue_name is null
          or not exists (select 1 from dispatch.queues q where q.name = m.queue_name and q.paused))
      order by m.due_at
      limit ${limit}
      for update of m skip locked),
    claim as materialized (select nextval('dispatch.claims_id_seq') as id where exists (select 1 from picked)),
    claimed as (
      update dispatch.messages m set due_at = null, claim_id = claim.id
      from picked, claim where m.id = picked.id
      returning ${messageColumns(tx, "m")}),
    registered as (
      insert into dispatch.claims (id, worker_id, message_ids) overriding system value
      select claim.id, ${workerId}, array(select id from claimed) from claim)
    select * from claimed`;
}
