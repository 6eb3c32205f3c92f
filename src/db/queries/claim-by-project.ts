/**
 * The claim on Citus (db/citus/layout.ts): project by project, each claim one
 * call the coordinator delegates to the project's node (`CLAIM_ON_NODE`), which
 * runs the claim's statement there (`CLAIM_ONE_PROJECT`, see claim-messages.ts)
 * and registers the claim beside the messages (`claims` is distributed on the
 * project too), in one transaction of that node: the coordinator neither plans
 * the statement nor takes part in its commit. The claim's id was taken from the
 * claims' sequence beforehand, a block at a time.
 */
import type { DelegatedFunction } from "../citus/delegated";
import type { Sql } from "../client";
import { destinationOf } from "../destination";
import { messageColumnTypes } from "../message-columns";
import { type Claim, CLAIM_ONE_PROJECT, type ClaimRoom, type ClaimRow, claimOf } from "./claim-messages";

/**
 * Claim ids for the claims of one process on Citus, taken from the claims'
 * sequence a block at a time (one statement per block, not per claim). An id
 * is used up only by a claim that took messages, or whose end is unknown
 * (it failed): an empty claim left no row that names it.
 */
export class ClaimIds {
  private readonly free: number[] = [];

  constructor(private readonly block = 64) {}

  /** The id the next claim runs under. */
  async next(sql: Sql): Promise<number> {
    if (this.free.length === 0) {
      const [row] = await sql<{ ids: number[] }[]>`
        select array(select nextval('dispatch.claims_id_seq') from generate_series(1, ${this.block}::int)) as ids`;
      this.free.push(...row!.ids.map(Number).reverse());
    }
    return this.free.at(-1)!;
  }

  /** The id `next` gave is taken. */
  used(): void {
    this.free.pop();
  }
}

/**
 * Claims due messages of `project` for `workerId` within `room`, and registers
 * the claim, in one transaction, under an id of `ids`.
 */
export async function claimProjectMessages(sql: Sql, workerId: string, room: ClaimRoom, project: string, ids: ClaimIds): Promise<Claim> {
  const id = await ids.next(sql);
  let claim: Claim;
  try {
    claim = await claimUnder(sql, id, workerId, room, project);
  } catch (error) {
    ids.used();
    throw error;
  }
  if (claim.messages.length > 0) ids.used();
  return claim;
}

/**
 * `claimUnder`'s function, made on Citus by db/citus/delegated.ts. Its parameters stand where the claim's
 * statement has them ($1 to $6), so the statement runs in it as written; the loop's variable has a name
 * the statement's aliases cannot take for it.
 */
export const CLAIM_ON_NODE: DelegatedFunction = {
  signature: "dispatch.claim_on_node(bigint, int, int, jsonb, int, text, text)",
  definition: `
create or replace function dispatch.claim_on_node(
  p_claim bigint, p_limit int, p_share int, p_room jsonb, p_pass int, p_project text, p_worker text)
returns setof record language plpgsql as $function$
declare
  v_row record;
  v_ids text[] := '{}';
begin
  for v_row in ${CLAIM_ONE_PROJECT} loop
    if v_row.id is not null then v_ids := v_ids || v_row.id; end if;
    return next v_row;
  end loop;
  if cardinality(v_ids) > 0 then
    insert into dispatch.claims (id, project, worker_id, message_ids) overriding system value
    values (p_claim, p_project, p_worker, v_ids);
  end if;
end
$function$`,
};

/** The call of `CLAIM_ON_NODE`, its rows typed as the claim's statement answers them (`ClaimRow`). */
export const CLAIM_CALL = `select * from dispatch.claim_on_node($1, $2, $3, $4, $5, $6, $7)
  as c(${messageColumnTypes()}, "parkedCount" int, more boolean, "waitingDestinations" text[])`;

/** One call, outside any transaction block: Citus delegates only such a call to the project's node. */
async function claimUnder(sql: Sql, id: number, workerId: string, room: ClaimRoom, project: string): Promise<Claim> {
  const rows = await sql.unsafe<ClaimRow[]>(
    CLAIM_CALL,
    [id, room.limit, room.share, sql.json(room.byDestination), room.pass, project, workerId] as never[],
    { prepare: true },
  );
  return claimOf(rows);
}

/**
 * Citus: claims project by project, each project's claim a statement routed
 * to its node, starting from the `turn`-th project so that each gets to go
 * first in turn, and each taking at most twice its even share of the claim
 * (as the one-server claim reads each project). A destination's room is one
 * for the whole claim: what a project's claim took of it is not offered to
 * the next.
 */
export async function claimByProject(sql: Sql, workerId: string, room: ClaimRoom, turn: number, ids: ClaimIds): Promise<Claim> {
  const names = (await sql<{ name: string }[]>`select name from dispatch.projects order by name`).map((row) => row.name);
  const each = names.length <= 1 ? room.limit : Math.max(16, Math.ceil((room.limit * 2) / names.length));
  const byDestination = { ...room.byDestination };
  const claim: Claim = { messages: [], parked: 0, waiting: [], more: false };
  for (let i = 0; i < names.length && claim.messages.length < room.limit; i++) {
    const project = names[(turn + i) % names.length]!;
    const limit = Math.min(each, room.limit - claim.messages.length);
    const taken = await claimProjectMessages(sql, workerId, { ...room, limit, byDestination }, project, ids);
    for (const message of taken.messages) {
      const destination = message.destination ?? destinationOf(message.url);
      byDestination[destination] = (byDestination[destination] ?? room.share) - 1;
    }
    claim.messages.push(...taken.messages);
    claim.parked += taken.parked;
    claim.waiting.push(...taken.waiting);
    claim.more ||= taken.more || (taken.messages.length === limit && limit < room.limit);
  }
  return claim;
}
