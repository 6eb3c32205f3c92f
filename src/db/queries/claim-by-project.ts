/**
 * The claim on Citus (db/citus/layout.ts): project by project, each claim a
 * statement routed to the project's node (`CLAIM_ONE_PROJECT`, see
 * claim-messages.ts) under an id the process took from the claims' sequence
 * beforehand, then registered on the coordinator, in one transaction.
 */
import type { Sql } from "../client";
import { destinationOf } from "../destination";
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

function claimUnder(sql: Sql, id: number, workerId: string, room: ClaimRoom, project: string): Promise<Claim> {
  return sql.begin(async (tx) => {
    const rows = await tx.unsafe<ClaimRow[]>(
      CLAIM_ONE_PROJECT,
      [id, room.limit, room.share, tx.json(room.byDestination), room.pass, project] as never[],
      { prepare: true },
    );
    const claim = claimOf(rows);
    if (claim.messages.length > 0) {
      await tx`
        insert into dispatch.claims (id, worker_id, message_ids) overriding system value
        values (${id}, ${workerId}, ${claim.messages.map((message) => message.id)})`;
    }
    return claim;
  });
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
