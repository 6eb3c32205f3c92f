/**
 * The postgres.js client. All app queries go through a `Sql` made here; only
 * graphile-worker (node-postgres, given a pool built from the same endpoint:
 * connection/drivers.ts) uses other connections.
 */
import postgres from "postgres";
import { postgresJsOptions } from "./connection/drivers";
import { parseConnectionUrl } from "./connection/settings";
import { type Endpoint, unresolvedEndpoint } from "./connection/transport";

/** A postgres.js connection pool. */
export type Sql = postgres.Sql;
/** A transaction (or the pool itself) that queries can run on. */
export type Tx = postgres.TransactionSql | postgres.Sql;
/** An open transaction (one that can hold savepoints). */
export type Transaction = postgres.TransactionSql;
/** What LISTEN needs of a pool: its `listen` (on the direct connection when queries go through a pooler). */
export type Listener = Pick<Sql, "listen">;

/** How a pool is run, besides its size. */
export interface PoolOptions {
  /**
   * Prepare statements on the server (the default). Off behind a
   * transaction-mode pooler, which hands each transaction any server
   * connection, where a statement prepared on another is unknown.
   */
  prepare?: boolean;
  /** Close connections idle this long (none by default). */
  idleTimeoutSeconds?: number | null;
  /** How its sessions name themselves in pg_stat_activity (the URL's application_name, else "dispatch", by default). */
  applicationName?: string;
}

/** Opens a pool on `target` (an endpoint, or a URL read as it is); `max` bounds its connections. */
export function createSql(target: Endpoint | string, max = 10, pool: PoolOptions = {}): Sql {
  const endpoint = typeof target === "string" ? unresolvedEndpoint(parseConnectionUrl(target, "the database URL")) : target;
  const options = postgresJsOptions(endpoint, { max, prepare: pool.prepare ?? true, idleTimeoutSeconds: pool.idleTimeoutSeconds ?? null });
  return postgres({
    ...options,
    ...(pool.applicationName ? { connection: { ...options.connection, application_name: pool.applicationName } } : {}),
    // Reconnect within a second of the database coming back; the driver's default backoff
    // grows to 20 s after a few failed attempts, which would stall a restart's recovery.
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1),
    onnotice: () => {},
    // int8 (identity keys, counts) as JS numbers: exact up to 2^53, far beyond any row count here.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: Number } },
  });
}
