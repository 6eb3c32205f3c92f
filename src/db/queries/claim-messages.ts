/**
 * The claim: a worker takes up to `limit` due messages in one statement,
 * no more of each destination than the worker has room for. Rows come off
 * the work list (`due_at` cleared) under a new claim, and the claim is
 * registered for the worker, whose heartbeat keeps it alive
 * (`sweep-claims.ts` frees the claims of a dead worker). SKIP LOCKED lets any
 * number of workers claim at once; messages of paused queues are passed over
 * and keep their slot until the queue resumes.
 *
 * A destination that may take nothing now — its circuit is open or held
 * (`dispatch.destinations`), or this worker already holds its share of slots
 * for it — has the due messages the claim passes over parked in its own line
 * (`destination_parked`, off the work list), so the next claim does not read
 * them again: a blocked destination's backlog costs each of its messages one
 * more row write, not a scan per claim. Lines are served first, oldest first,
 * by any worker with room for their destination; while a destination has a
 * line, its newly due messages join the line behind it.
 *
 * Projects are served in turn: each project's due messages are read apart
 * (`messages_due_idx` leads with the project), and the claim takes the first
 * of each project, then the second of each, and so on, also within one
 * destination's room, so one project's backlog delays another's new messages
 * by a claim, not by the backlog. (A destination's line, once it has one, is
 * served oldest first whoever sent to it: it is one destination.) With
 * several projects due, each is read up to twice its even share of the
 * claim; a claim that stopped a project's read there says so (`more`), and
 * the worker claims again at once while it has room.
 */
import type { Tx } from "../client";
import { type MessageRow, messageColumnList } from "../message-columns";
import { DESTINATION_HELD } from "./destination-health";

/** A message held under a claim: its `claimId` is set. */
export type ClaimedMessage = MessageRow & { claimId: number };

/** How much of each destination one claim may take. */
export interface ClaimRoom {
  /** Messages the claim may take in all. */
  limit: number;
  /** How many messages of a destination not in `byDestination` it may take. */
  share: number;
  /** Destinations with a room of their own (those the worker has in flight); 0 parks their due messages. */
  byDestination: Record<string, number>;
  /** Due messages to read beyond `limit`, to park those of destinations that may take none. */
  pass: number;
}

/**
 * What a claim took, how many due messages it parked in their destination's
 * line, and the destinations with messages left waiting for room: those with
 * a line, and those it left due messages of for want of room (the worker
 * claims again when a slot of one of them frees, not at its next poll).
 */
export interface Claim {
  messages: ClaimedMessage[];
  parked: number;
  waiting: string[];
  /** A project had more due messages than this claim read of it. */
  more: boolean;
}

/**
 * A due message `m` the claim may take: in no paused queue. A paused queue's
 * started messages stay due but wait unclaimed (a few at most: its
 * parallelism), so the scrape's overdue figure asks the same.
 */
export const NOT_PAUSED = notPausedIn("m.project");

/** NOT_PAUSED, its queue read in project `project` (SQL): on Citus, the claim names the project as a value, not a column. */
function notPausedIn(project: string): string {
  return `(m.queue_name is null
  or not exists (select 1 from dispatch.queues q where q.project = ${project} and q.name = m.queue_name and q.paused))`;
}

/**
 * The claim's statement. On one server it reads every project, takes the claim id from
 * the sequence and registers the claim. On Citus (`byProject`) it reads one project,
 * $6, so that Citus routes it to the node holding that project's shards, where SKIP
 * LOCKED works as on one server: every read of a distributed table names the project,
 * the claim's id comes in as $1 (Citus refuses `nextval()` in an UPDATE of a
 * distributed table) and the claim is registered apart, by the function on the
 * project's node that runs this statement (claim-by-project.ts: Citus plans no
 * INSERT ... SELECT among the CTEs of a statement it routes).
 *
 * $1 worker (by project: the claim's id), $2 limit, $3 share, $4 room by destination (jsonb), $5 pass.
 */
function claimStatement(byProject: boolean): string {
  const inProject = byProject ? "and m.project = $6::text" : "";
  const notPaused = byProject ? notPausedIn("$6::text") : NOT_PAUSED;
  const dueProjects = byProject
    ? "select $6::text as name"
    : "select p.name from dispatch.projects p where exists (select 1 from dispatch.messages m where m.project = p.name and m.due_at <= now())";
  const registered = byProject
    ? ""
    : `,
  registered as (
    insert into dispatch.claims (id, worker_id, message_ids) overriding system value
    select claim.id, $1, array(select id from claimed) from claim)`;
  return `
  with recursive
  room as (select key as destination, value::int as n from jsonb_each_text($4::jsonb)),
  held as (select d.destination from dispatch.destinations d where ${DESTINATION_HELD}),
  due_projects as (${dueProjects}),
  turns as (
    select d.name, case when count(*) over () = 1 then $2::int + $5::int
      else greatest(16, ceil(($2::int + $5::int) * 2.0 / count(*) over ()))::int end as reads
    from due_projects d),
  lines as (
    (select m.destination from dispatch.messages m where m.destination_parked ${inProject} order by m.destination limit 1)
    union all
    select (select m.destination from dispatch.messages m
            where m.destination_parked ${inProject} and m.destination > l.destination order by m.destination limit 1)
    from lines l where l.destination is not null),
  from_lines as (
    select x.id from lines l cross join lateral (
      select m.id from dispatch.messages m
      where m.destination = l.destination and m.destination_parked ${inProject} and ${notPaused}
      order by m.next_delivery_at, m.seq
      limit coalesce((select r.n from room r where r.destination = l.destination), $3::int)
      for update of m skip locked) x
    where l.destination is not null and l.destination not in (select destination from held)
    limit $2::int),
  scan as (
    select x.* from turns t cross join lateral (
      select m.id, m.project, m.destination, m.due_at from dispatch.messages m
      where ${byProject ? "m.project = $6::text" : "m.project = t.name"} and m.due_at <= now() and ${notPaused}
      order by m.due_at
      limit t.reads
      for update of m skip locked) x),
  turned as (
    select s.*, row_number() over (partition by s.project order by s.due_at) as turn from scan s),
  ranked as (
    select s.id, s.project, s.destination, s.due_at, s.turn,
      row_number() over (partition by s.destination order by s.turn, s.due_at) as n,
      case when s.destination in (select destination from held)
          or s.destination in (select destination from lines where destination is not null) then 0
        else coalesce((select r.n from room r where r.destination = s.destination), $3::int) end as room
    from turned s),
  picked as (
    select id from from_lines
    union all
    (select id from ranked where n <= room order by turn, due_at limit $2::int - (select count(*) from from_lines))),
  claim as materialized (select ${byProject ? "$1::bigint" : "nextval('dispatch.claims_id_seq')"} as id where exists (select 1 from picked)),
  claimed as (
    update dispatch.messages m set due_at = null, destination_parked = false, claim_id = claim.id
    from picked, claim where m.id = picked.id ${inProject}
    returning ${messageColumnList("m")}),
  parked as (
    update dispatch.messages m set due_at = null, claim_id = null, destination_parked = true
    from ranked r where m.id = r.id ${inProject} and r.room = 0 and m.destination is not null
    returning m.id)${registered}
  select c.*, p.count as "parkedCount",
    exists (select 1 from turns t where t.reads <= (select count(*) from scan s where s.project = t.name)) as more,
    array(select l.destination from lines l where l.destination is not null
          union select r.destination from ranked r where r.n > r.room and r.room > 0) as "waitingDestinations"
  from (select count(*)::int as count from parked) p left join claimed c on true`;
}

const CLAIM = claimStatement(false);
/** The claim of one project, on Citus (claim-by-project.ts). */
export const CLAIM_ONE_PROJECT = claimStatement(true);

/** Claims due messages for `workerId` within `room`. */
export async function claimMessages(tx: Tx, workerId: string, room: ClaimRoom): Promise<Claim> {
  const rows = await tx.unsafe<ClaimRow[]>(
    CLAIM,
    [workerId, room.limit, room.share, tx.json(room.byDestination), room.pass] as never[],
    { prepare: true },
  );
  return claimOf(rows);
}

/** A row the claim statements answer. */
export type ClaimRow = ClaimedMessage & { parkedCount: number; waitingDestinations: string[]; more: boolean };

/** What a claim took, from the rows its statement answered. */
export function claimOf(rows: ClaimRow[]): Claim {
  const parked = rows[0]?.parkedCount ?? 0;
  const waiting = rows[0]?.waitingDestinations ?? [];
  const more = rows[0]?.more ?? false;
  const messages: ClaimedMessage[] = [];
  for (const row of rows) {
    if (row.id === null) continue;
    delete (row as Partial<typeof row>).parkedCount;
    delete (row as Partial<typeof row>).waitingDestinations;
    delete (row as Partial<typeof row>).more;
    messages.push(row);
  }
  return { messages, parked, waiting, more };
}
