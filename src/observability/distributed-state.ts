/**
 * What a `/metrics` scrape reads on Citus (db/citus/layout.ts): the figures of
 * database-state.ts, in statements Citus can run. Its one statement there
 * nests reads of distributed tables in subqueries Citus cannot push down, so
 * here each is a statement of its own: counts by project over every node
 * (grouped by the distribution column, so each node counts its own), and
 * the per-project figures (how long the oldest due message has waited, how
 * far behind retention is) one statement per project, routed to its node.
 * The claims in flight (a sum over every node) and what the coordinator
 * alone holds (heartbeats, connections) are read apart.
 */
import type { Sql } from "../db/client";
import { NOT_PAUSED } from "../db/queries/claim-messages";
import {
  CIRCUITS_BY_STATE,
  CONNECTIONS_BY_STATE,
  type DatabaseState,
  DLQ_BY_PROJECT,
  type ProjectFigure,
  RETENTION_LOOK_AHEAD,
  RUNS_BY_STATE,
  WAITING_BY_PROJECT,
} from "./database-state";

/** Reads the state on Citus; `retentionMs` is DISPATCH_RETENTION (finished messages). */
export async function readDistributedState(sql: Sql, heartbeatId: string | null, retentionMs: number): Promise<DatabaseState> {
  const projects = (await sql<{ name: string }[]>`select name from dispatch.projects order by name`).map((row) => row.name);
  const [waiting, dlq, queues, runs, local, circuits] = await Promise.all([
    sql.unsafe<ProjectFigure[]>(WAITING_BY_PROJECT),
    sql.unsafe<ProjectFigure[]>(DLQ_BY_PROJECT),
    queueLags(sql),
    sql.unsafe<{ state: string; n: number }[]>(RUNS_BY_STATE),
    coordinatorState(sql, heartbeatId),
    sql.unsafe<{ state: string; n: number }[]>(CIRCUITS_BY_STATE),
  ]);
  const overdue: ProjectFigure[] = [];
  const retentionOverdue: ProjectFigure[] = [];
  for (const project of projects) {
    const [late] = await sql<{ seconds: number }[]>`
      select extract(epoch from now() - m.due_at)::float8 as seconds from dispatch.messages m
      where m.project = ${project} and m.due_at is not null and m.due_at <= now() and ${sql.unsafe(NOT_PAUSED)}
      order by m.due_at limit 1`;
    if (late) overdue.push({ project, n: late.seconds });
    const behind = await retentionBehind(sql, project, retentionMs);
    if (behind !== null) retentionOverdue.push({ project, n: behind });
  }
  return { waiting: [...waiting], overdue, dlq: [...dlq], retentionOverdue, queues, runs: [...runs], circuits: [...circuits], ...local };
}

/** Each queue's lag: its messages waiting for it (queues without any: 0). */
async function queueLags(sql: Sql): Promise<DatabaseState["queues"]> {
  const [queues, counts] = await Promise.all([
    sql<{ project: string; name: string }[]>`select project, name from dispatch.queues`,
    sql<{ project: string; name: string; n: number }[]>`
      select project, pending_queue as name, count(*)::int as n from dispatch.messages
      where pending_queue is not null group by 1, 2`,
  ]);
  const lag = new Map(counts.map((row) => [`${row.project}\n${row.name}`, row.n]));
  return queues.map(({ project, name }) => ({ project, name, lag: lag.get(`${project}\n${name}`) ?? 0 }));
}

/**
 * The claims in flight (a sum over every node), and what the coordinator's own tables and its server say:
 * this worker's heartbeat, connections.
 */
async function coordinatorState(sql: Sql, heartbeatId: string | null): Promise<Pick<DatabaseState, "inFlight" | "heartbeatAge" | "connections">> {
  const [[claims], [coordinator]] = await Promise.all([
    sql<Pick<DatabaseState, "inFlight">[]>`select coalesce(sum(cardinality(message_ids)), 0)::int as "inFlight" from dispatch.claims`,
    sql<Pick<DatabaseState, "heartbeatAge" | "connections">[]>`
      select
        (select extract(epoch from now() - heartbeat_at)::float8 from dispatch.workers where id = ${heartbeatId}) as "heartbeatAge",
        (select coalesce(json_agg(a), '[]') from (${sql.unsafe(CONNECTIONS_BY_STATE)}) a) as connections`,
  ]);
  return { ...claims!, ...coordinator! };
}

/** Seconds past its removal of `project`'s oldest message retention should have removed, or null. */
async function retentionBehind(sql: Sql, project: string, retentionMs: number): Promise<number | null> {
  const cutoff = sql`now() - ${retentionMs} * interval '1 millisecond'`;
  const [row] = await sql<{ seconds: number }[]>`
    select extract(epoch from ${cutoff} - greatest(m.created_at, m.completed_at))::float8 as seconds
    from (select * from dispatch.messages where project = ${project} and created_at < ${cutoff}
      order by created_at limit ${RETENTION_LOOK_AHEAD}) m
    where m.completed_at < ${cutoff} and m.workflow_run_pk is null
      and not exists (select 1 from dispatch.dlq d where d.project = ${project} and d.message_id = m.id)
    order by m.created_at limit 1`;
  return row?.seconds ?? null;
}
