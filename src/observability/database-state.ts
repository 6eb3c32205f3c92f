/**
 * What a `/metrics` scrape reads from the database (metrics.ts), in one
 * statement: what waits, what is in flight, the DLQ, queue lag, workflow
 * runs, connections, circuits, this worker's heartbeat, and how far behind
 * the engine and retention are. Each part reads through an index leading
 * with the project, or a table that stays small. On Citus the same figures
 * are read in statements it can run (distributed-state.ts). A scrape waits for it a
 * few seconds at most (`scrapeReads`).
 */
import type { Sql } from "../db/client";
import { NOT_PAUSED } from "../db/queries/claim-messages";

/** A figure of a project. */
export interface ProjectFigure {
  project: string;
  n: number;
}

/** What a scrape reads from the database. */
export interface DatabaseState {
  waiting: ProjectFigure[];
  /** Seconds the longest-due unclaimed message of each project, in no paused queue, has been due (projects with one only). */
  overdue: ProjectFigure[];
  inFlight: number;
  dlq: ProjectFigure[];
  /** Seconds past its removal of each project's oldest message retention should have removed (projects with one only). */
  retentionOverdue: ProjectFigure[];
  queues: { project: string; name: string; lag: number }[];
  runs: { state: string; n: number }[];
  connections: { state: string; n: number }[];
  heartbeatAge: number | null;
  circuits: { state: string; n: number }[];
}

/**
 * How many of a project's oldest messages the retention figure looks at: the
 * oldest ones may be kept on purpose (pending, in the DLQ, a run's), and past
 * this many such rows it says 0 rather than scan on.
 */
export const RETENTION_LOOK_AHEAD = 1000;

/** The parts read the same way on one server and on Citus (distributed-state.ts): rows of (project, n) or (state, n). */
export const WAITING_BY_PROJECT = `select project, count(*)::int as n from dispatch.messages
  where due_at <= now() or flow_parked or destination_parked group by project`;
export const DLQ_BY_PROJECT = "select project, count(*)::int as n from dispatch.dlq group by project";
export const RUNS_BY_STATE = "select state, count(*)::int as n from dispatch.workflow_runs group by state";
export const CONNECTIONS_BY_STATE = `select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity
  where datname = current_database() and application_name = 'dispatch' group by 1`;
export const CIRCUITS_BY_STATE = `select case when circuit = 'CLOSED' then 'HELD' else circuit end as state, count(*)::int as n
  from dispatch.destinations where (circuit <> 'CLOSED' or held_until is not null)
    and (circuit <> 'CLOSED' or held_until > now()) group by 1`;

/** Reads the state; `retentionMs` is DISPATCH_RETENTION (finished messages). */
export async function readDatabaseState(sql: Sql, heartbeatId: string | null, retentionMs: number): Promise<DatabaseState> {
  const cutoff = sql`now() - ${retentionMs} * interval '1 millisecond'`;
  const [row] = await sql<DatabaseState[]>`
    select
      (select coalesce(json_agg(w), '[]') from (${sql.unsafe(WAITING_BY_PROJECT)}) w) as waiting,
      (select coalesce(json_agg(json_build_object('project', p.name, 'n', o.seconds)), '[]') from dispatch.projects p,
        lateral (select extract(epoch from now() - m.due_at)::float8 as seconds from dispatch.messages m
          where m.project = p.name and m.due_at is not null and m.due_at <= now() and ${sql.unsafe(NOT_PAUSED)}
          order by m.due_at limit 1) o) as overdue,
      (select coalesce(sum(cardinality(message_ids)), 0)::int from dispatch.claims) as "inFlight",
      (select coalesce(json_agg(d), '[]') from (${sql.unsafe(DLQ_BY_PROJECT)}) d) as dlq,
      (select coalesce(json_agg(json_build_object('project', p.name, 'n', r.seconds)), '[]') from dispatch.projects p,
        lateral (select extract(epoch from ${cutoff} - greatest(m.created_at, m.completed_at))::float8 as seconds
          from (select * from dispatch.messages where project = p.name and created_at < ${cutoff} order by created_at limit ${RETENTION_LOOK_AHEAD}) m
          where m.completed_at < ${cutoff} and m.workflow_run_pk is null
            and not exists (select 1 from dispatch.dlq d where d.message_id = m.id)
          order by m.created_at limit 1) r) as "retentionOverdue",
      (select coalesce(json_agg(json_build_object('project', q.project, 'name', q.name, 'lag',
        (select count(*) from dispatch.messages m where m.project = q.project and m.pending_queue = q.name))), '[]')
        from dispatch.queues q) as queues,
      (select coalesce(json_agg(r), '[]') from (${sql.unsafe(RUNS_BY_STATE)}) r) as runs,
      (select coalesce(json_agg(a), '[]') from (${sql.unsafe(CONNECTIONS_BY_STATE)}) a) as connections,
      (select extract(epoch from now() - heartbeat_at)::float8 from dispatch.workers where id = ${heartbeatId}) as "heartbeatAge",
      (select coalesce(json_agg(c), '[]') from (${sql.unsafe(CIRCUITS_BY_STATE)}) c) as circuits`;
  return row!;
}

/**
 * Longest a scrape waits for its read: within Prometheus's default scrape
 * timeout (10 s), so a database that hangs (a host gone silent keeps the
 * pool's sockets waiting for minutes) reads as down instead of failing the
 * scrape, which would read as Dispatch down.
 */
const READ_DEADLINE_MS = 5000;

/**
 * The read of each scrape: `read` run once and shared by every gauge of the
 * scrape (they ask at once), null when it failed or did not answer within
 * READ_DEADLINE_MS, `failed` hearing why. A read still running when the next
 * scrape asks is waited for again, not started anew, so a hung database
 * holds one connection, not one per scrape.
 */
export function scrapeReads(read: () => Promise<DatabaseState>, failed: (error: unknown) => void): () => Promise<DatabaseState | null> {
  let running: Promise<DatabaseState> | null = null;
  let shared: Promise<DatabaseState | null> | null = null;
  const readInTime = async () => {
    running ??= read().finally(() => (running = null));
    try {
      return await withinDeadline(running);
    } catch (error) {
      failed(error);
      return null;
    }
  };
  // The gauges of a scrape ask within one turn; the answer serves the scrapes of the next 100 ms too.
  return () => (shared ??= readInTime().finally(() => setTimeout(() => (shared = null), 100)));
}

function withinDeadline<T>(answer: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${READ_DEADLINE_MS / 1000} s`)), READ_DEADLINE_MS);
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}
