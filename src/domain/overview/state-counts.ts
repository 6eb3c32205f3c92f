/**
 * How many messages (or workflow runs) are in each state, without counting a
 * large table on every refresh: no index names `state` (the delivered update
 * must stay HOT, db/schema.ts), so an exact count reads the whole table. A
 * table of up to `EXACT_LIMIT` rows is counted exactly (a bounded scan finds
 * out which it is); a larger one is estimated from the planner's statistics
 * (`pg_class.reltuples` times `pg_stats.most_common_freqs` of `state`, and of
 * `project` when the database has other projects: the states are assumed
 * spread alike in every project), which autovacuum's ANALYZE keeps current.
 * Counted per project: the overview shows the viewer's project.
 */
import type { Tx } from "../../db/client";

/** Tables counted by state. */
export type CountedTable = "messages" | "workflow_runs";

/** Counts by state, and whether they are estimates. */
export interface StateCounts {
  counts: Record<string, number>;
  estimated: boolean;
}

/** Up to this many rows a table is counted exactly. */
export const EXACT_LIMIT = 50_000;

/** The rows of `table` of `project` by state: exact while few, else estimated. */
export async function countByState(tx: Tx, table: CountedTable, project: string): Promise<StateCounts> {
  const name = tx(`dispatch.${table}`);
  const [bounded] = await tx<{ rows: number }[]>`
    select count(*)::int as rows from (select 1 from ${name} where project = ${project} limit ${EXACT_LIMIT + 1}) t`;
  if (bounded!.rows <= EXACT_LIMIT) {
    const exact = await tx<{ state: string; n: number }[]>`
      select state, count(*)::int as n from ${name} where project = ${project} group by state`;
    return { counts: Object.fromEntries(exact.map((row) => [row.state, row.n])), estimated: false };
  }
  const share = await projectShare(tx, table, project);
  const counts = await estimate(tx, table);
  return { counts: Object.fromEntries(Object.entries(counts).map(([state, n]) => [state, Math.round(n * share)])), estimated: true };
}

/** The share of `table`'s rows that are `project`'s, from the planner's statistics (1 while it is the only project). */
async function projectShare(tx: Tx, table: CountedTable, project: string): Promise<number> {
  const [row] = await tx<{ others: boolean; projects: string[] | null; freqs: number[] | null }[]>`
    select exists (select 1 from dispatch.projects where name <> ${project}) as others,
      s.most_common_vals::text::text[] as projects, s.most_common_freqs::float8[] as freqs
    from (select 1) one
      left join pg_stats s on s.schemaname = 'dispatch' and s.tablename = ${table} and s.attname = 'project'`;
  if (!row?.others) return 1;
  const index = row.projects?.indexOf(project) ?? -1;
  return index < 0 ? 0 : (row.freqs?.[index] ?? 0);
}

async function estimate(tx: Tx, table: CountedTable): Promise<Record<string, number>> {
  const [row] = await tx<{ total: number; states: string[] | null; freqs: number[] | null }[]>`
    select greatest(c.reltuples, 0)::float8 as total, s.most_common_vals::text::text[] as states,
      s.most_common_freqs::float8[] as freqs
    from pg_class c
      left join pg_stats s on s.schemaname = 'dispatch' and s.tablename = ${table} and s.attname = 'state'
    where c.oid = ${`dispatch.${table}`}::regclass`;
  const counts: Record<string, number> = {};
  (row?.states ?? []).forEach((state, index) => {
    counts[state] = Math.round(row!.total * (row!.freqs?.[index] ?? 0));
  });
  return counts;
}
