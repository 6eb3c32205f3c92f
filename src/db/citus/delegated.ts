/**
 * Functions Citus runs on the node of the project their first argument names
 * (docs/citus.md, rule 7). Called alone, outside a transaction
 * block, `select f(project, ...)` is forwarded by the coordinator to that node
 * as it is: the coordinator neither plans nor routes what the function does
 * (an empty claim cost a coordinator backend 3.2 ms of CPU routed, 0.5 ms
 * delegated; the record of deliveries: docs/citus.md, "Measured").
 *
 * `makeDelegatedFunctions` runs at each `dispatch migrate` of a distributed
 * database and makes again those whose definition is not this build's (each
 * carries its definition's digest as its comment); a plain database has none.
 */
import { createHash } from "node:crypto";
import type { Tx } from "../client";
import { pendingSql } from "../vocabulary";

/** `recordDeliveredOnNode`'s function (db/queries/record-delivered.ts): what one autocommit statement does on one server. */
const RECORD_DELIVERED = `
create or replace function dispatch.record_delivered_on_node(
  p_project text, p_message_ids text[], p_claim_ids bigint[], p_attempt_ids bigint[],
  p_retried int[], p_started_at timestamptz[], p_duration_ms int[], p_status int[])
returns text[] language plpgsql as $function$
declare changed text[];
begin
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
$function$`;

/** Each function with its signature, delegated on its first argument (`p_project`) beside the messages' shards. */
const DELEGATED = [
  {
    definition: RECORD_DELIVERED,
    signature: "dispatch.record_delivered_on_node(text, text[], bigint[], bigint[], int[], timestamptz[], int[], int[])",
  },
];

/**
 * Makes each delegated function that is missing or not this build's, and registers it with Citus for
 * delegation; a start or a command on a current database changes nothing (no DDL sent to every node).
 */
export async function makeDelegatedFunctions(tx: Tx): Promise<void> {
  for (const { definition, signature } of DELEGATED) {
    const digest = createHash("sha256").update(definition).digest("hex");
    const [made] = await tx<{ current: boolean }[]>`
      select coalesce(obj_description(to_regprocedure(${signature}), 'pg_proc') = ${digest}, false) as current`;
    if (made!.current) continue;
    await tx.unsafe(definition);
    await tx`select create_distributed_function(${signature}, 'p_project', colocate_with => 'dispatch.messages')`;
    await tx.unsafe(`comment on function ${signature} is '${digest}'`);
  }
}
