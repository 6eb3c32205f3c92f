/**
 * How many messages (or workflow runs) are in each state, without counting a
 * large table on every refresh: no index names `state` (the delivered update
 * must stay HOT, db/schema.ts), so an exact count reads the whole table. A
 * table of up to `EXACT_LIMIT` rows is counted exactly (a bounded scan finds
 * out which it is); a larger one is estimated from the planner's statistics
 * (`pg_class.reltuples` times `pg_stats.most_common_freqs` of `state`), which
 * autovacuum's ANALYZE keeps current.
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

/** The rows of `table` by state: exact while small, else estimated. */
export async function countByState(tx: Tx, table: CountedTable): Promise<StateCounts> {
  const name = tx(`dispatch.${table}`);
  const [bounded] = await tx<{ rows: number }[]>`
    select count(*)::int as rows from (select 1 from ${name} limit ${EXACT_LIMIT + 1}) t`;
  if (bounded!.rows <= EXACT_LIMIT) {
    const exact = await tx<{ state: string; n: number }[]>`select state, count(*)::int as n from ${name} group by state`;
    return { counts: Object.fromEntries(exact.map((row) => [row.state, row.n])), estimated: false };
  }
  return { counts: await estimate(tx, table), estimated: true };
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
