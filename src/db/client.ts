/**
 * The postgres.js client. All app queries go through a `Sql` made here; only
 * drizzle's migrator and graphile-worker (which brings its own `pg` pool) use
 * other connections.
 */
import postgres from "postgres";

/** A postgres.js connection pool. */
export type Sql = postgres.Sql;
/** A transaction (or the pool itself) that queries can run on. */
export type Tx = postgres.TransactionSql | postgres.Sql;
/** An open transaction (one that can hold savepoints). */
export type Transaction = postgres.TransactionSql;

/** Opens a pool on `url`; `max` bounds its connections. */
export function createSql(url: string, max = 10): Sql {
  return postgres(url, {
    max,
    // Fail fast when the server does not answer (a partition, a failover): callers answer 503 or retry.
    connect_timeout: 5,
    // Reconnect within a second of the database coming back; the driver's default backoff
    // grows to 20 s after a few failed attempts, which would stall a restart's recovery.
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1),
    onnotice: () => {},
    connection: { application_name: "dispatch" },
    // int8 (identity keys, counts) as JS numbers: exact up to 2^53, far beyond any row count here.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: Number } },
  });
}
