/**
 * The common outcome, in one autocommit statement for a whole batch: the
 * messages become DELIVERED (a HOT update: no index names the columns it
 * changes), each attempt gets its ACTIVE and DELIVERED events, and claims
 * whose every attempt is recorded are dropped. A message changes only while
 * it is still pending under the claim that made the attempt (a cancel or a
 * redelivery after a sweep wins); its events are kept either way.
 */
import type { Tx } from "../client";

/** A successful attempt of a message under a claim. */
export interface DeliveredAttempt {
  messageId: string;
  claimId: number;
  startedAt: Date;
  status: number;
}

/** Records `attempts`, drops the claims `releasedClaims`; returns the ids that changed state. */
export async function recordDelivered(sql: Tx, attempts: DeliveredAttempt[], releasedClaims: number[]): Promise<string[]> {
  const [row] = await sql<{ ids: string[] }[]>`
    with o as (
      select * from unnest(${attempts.map((a) => a.messageId)}::text[], ${attempts.map((a) => a.claimId)}::bigint[],
        ${attempts.map((a) => a.startedAt.toISOString())}::timestamptz[], ${attempts.map((a) => a.status)}::int[])
        with ordinality as o(id, claim_id, started_at, status, n)),
    delivered as (
      update dispatch.messages m set state = 'DELIVERED', completed_at = now()
      from o where m.id = o.id and m.claim_id = o.claim_id and m.state in ('CREATED', 'RETRY')
      returning m.id),
    events as (
      insert into dispatch.message_events (message_id, state, at, response_status)
      select o.id, e.state, case when e.k = 0 then o.started_at else now() end, case when e.k = 1 then o.status end
      from o cross join (values (0, 'ACTIVE'), (1, 'DELIVERED')) as e(k, state)
      order by o.n, e.k),
    released as (delete from dispatch.claims where id = any(${releasedClaims}::bigint[]))
    select array(select id from delivered) as ids`;
  return row!.ids;
}
