/** Row locks in tests: whether a session of the test's database waits for one. */
import type { Sql } from "../../src/db/client";

/** Sessions of the test's database waiting for a lock (read on `sql`, a connection of its own). */
export async function waitingOnLocks(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
  return row!.n;
}
