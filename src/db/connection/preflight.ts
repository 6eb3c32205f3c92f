/**
 * The checks a start makes before anything is written (before the first
 * migration): every URL is connected to with each driver that will use it,
 * so a TLS mode, a CA, a password or a pooler that cannot work stops the
 * start with one clear line instead of leaving a half-migrated database.
 *
 * - The app URL answers through postgres.js within the start-up bound.
 * - The direct URL answers through node-postgres (graphile-worker's driver)
 *   and postgres.js (migrations, LISTEN: on the start-up session the caller
 *   passes, which then runs the migrations, so a start opens one connection
 *   fewer), and keeps sessions: two connections open at once are served by
 *   two server processes. A transaction-mode pooler hands both the same
 *   one; behind it LISTEN hears nothing and graphile-worker's prepared
 *   statements vanish, so the start is refused, naming DATABASE_DIRECT_URL.
 * - The role's CONNECTION LIMIT leaves room for what this process holds on
 *   the direct URL (budget.ts), counting what other sessions of the role hold.
 */
import type pg from "pg";
import postgres from "postgres";
import { type ConnectionBudget, describeBudget, directConnections, poolSizeThatFits } from "./budget";
import { createNodePostgresPool, nodePostgresConfig, postgresJsOptions } from "./drivers";
import type { DatabaseEndpoints } from "./endpoints";
import { DatabaseStartError, explainDatabaseError } from "./errors";
import { describeServer } from "./settings";
import type { Endpoint } from "./transport";

/** What the checks learnt that the pools are sized by. */
export interface ServerFacts {
  /** The server's (or the role's) `idle_session_timeout` in seconds, or null when it closes no idle session. */
  idleSessionTimeoutSeconds: number | null;
}

/** How start-up checks (and the start-up session) name themselves in pg_stat_activity (and are left out of the role's count). */
export const CHECK_APPLICATION_NAME = "dispatch start-up check";

/**
 * Runs the checks; a failure is a DatabaseStartError saying what to change.
 * `session` is a postgres.js pool of one connection on the direct URL, named
 * CHECK_APPLICATION_NAME; it stays open for the caller (the migrations).
 */
export async function checkDatabase(endpoints: DatabaseEndpoints, budget: ConnectionBudget, session: postgres.Sql): Promise<ServerFacts> {
  const limits = { budget, pooled: endpoints.pooled };
  const facts = endpoints.pooled ? await checkPooledApp(endpoints.app, limits) : await checkSession(session, endpoints.direct, limits);
  if (endpoints.pooled) await checkSession(session, endpoints.direct, limits);
  await checkDirect(endpoints, limits);
  return facts;
}

/** The process's connections, for messages about limits. */
interface Limits {
  budget: ConnectionBudget;
  pooled: boolean;
}

/** The longest a start waits for one answer: a pooler with no free server connection queues clients silently. */
export function startWaitMs(endpoint: Endpoint): number {
  return Math.max(4, 2 * endpoint.settings.connectTimeoutSeconds) * 1000;
}

/** The app URL through a pooler, on a connection of its own (no statement prepared), closed at once. */
async function checkPooledApp(endpoint: Endpoint, limits: Limits): Promise<ServerFacts> {
  const options = postgresJsOptions(endpoint, { max: 1, prepare: false, idleTimeoutSeconds: null });
  const client = postgres({ ...options, onnotice: () => {}, connection: { ...options.connection, application_name: CHECK_APPLICATION_NAME } });
  try {
    return await checkSession(client, endpoint, limits);
  } finally {
    await client.end({ timeout: 1 }).catch(() => {});
  }
}

/** One answer through postgres.js on `client` (a connection to `endpoint`), and the server's idle-session timeout. */
async function checkSession(client: postgres.Sql, endpoint: Endpoint, limits: Limits): Promise<ServerFacts> {
  const [row] = await bounded(endpoint, limits, "the app's driver (postgres.js)", async () =>
    client<{ idle: string | null }[]>`select current_setting('idle_session_timeout', true) as idle`);
  return { idleSessionTimeoutSeconds: seconds(row?.idle ?? null) };
}

/** Two node-postgres sessions at once, the session test and the role's connection count. */
async function checkDirect(endpoints: DatabaseEndpoints, limits: Limits): Promise<void> {
  const { direct } = endpoints;
  const pool = createNodePostgresPool({ ...nodePostgresConfig(direct, 2), application_name: CHECK_APPLICATION_NAME });
  const connected: pg.PoolClient[] = [];
  try {
    await bounded(direct, limits, "graphile-worker's driver (node-postgres)", async () => {
      const clients = await Promise.allSettled([pool.connect(), pool.connect()]);
      for (const client of clients) if (client.status === "fulfilled") connected.push(client.value);
      for (const client of clients) if (client.status === "rejected") throw client.reason;
      const [first, second] = connected as [pg.PoolClient, pg.PoolClient];
      const pids = await Promise.all([first, second].map((client) => client.query("select pg_backend_pid() as pid")));
      if (pids[0]!.rows[0].pid === pids[1]!.rows[0].pid) throw transactionPoolerError(endpoints);
      await checkRoleLimit(first, endpoints, limits.budget);
    });
  } finally {
    // Closed, not returned: a check that timed out may still wait on them (in a pooler's queue).
    for (const client of connected) client.release(true);
    await pool.end().catch(() => {});
  }
}

function transactionPoolerError(endpoints: DatabaseEndpoints): DatabaseStartError {
  const { source } = endpoints.direct.settings;
  const remedy = endpoints.pooled
    ? `${source} must be a direct (or session-mode) connection to the server`
    : `keep the pooler's URL in ${source} and set DATABASE_DIRECT_URL to a direct (or session-mode) connection`;
  return new DatabaseStartError(
    `${source} (${describeServer(endpoints.direct.settings)}) goes through a transaction-mode pooler: two sessions were served by one server connection. ` +
      `LISTEN and graphile-worker need a session of their own: ${remedy} (docs/managed-postgres.md)`,
  );
}

/** Refuses a start whose connections would exceed the role's CONNECTION LIMIT, counting the role's other sessions. */
async function checkRoleLimit(client: pg.PoolClient, endpoints: DatabaseEndpoints, budget: ConnectionBudget): Promise<void> {
  const { rows } = await client.query<{ limit: number; super: boolean; used: number; role: string }>(
    `select r.rolconnlimit as limit, r.rolsuper as super, current_user as role,
       (select count(*) from pg_stat_activity a where a.usename = current_user and a.application_name <> $1)::int as used
     from pg_roles r where r.rolname = current_user`,
    [CHECK_APPLICATION_NAME],
  );
  const row = rows[0];
  if (!row || row.super || row.limit < 0) return;
  const needed = directConnections(budget, endpoints.pooled);
  if (row.used + needed <= row.limit) return;
  const fits = poolSizeThatFits(budget, row.limit - row.used);
  const advice = !endpoints.pooled && fits >= 2 ? ` (DISPATCH_DATABASE_POOL_SIZE=${fits} would fit)` : "";
  throw new DatabaseStartError(
    `${endpoints.direct.settings.source}: role "${row.role}" may hold ${row.limit} connections (CONNECTION LIMIT) and ${row.used} are in use by other sessions; ` +
      `${describeBudget(budget, endpoints.pooled)}${advice}`,
  );
}

/** Runs `check`, failing with an explained error, or when it waits longer than the start-up bound. */
async function bounded<T>(endpoint: Endpoint, limits: Limits, driver: string, check: () => Promise<T>): Promise<T> {
  const limitMs = startWaitMs(endpoint);
  const { settings } = endpoint;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseStartError(
      `${settings.source} (${describeServer(settings)}): ${driver} got no answer within ${limitMs / 1000} s: ` +
        "a pooler in front of the server may have no free server connection (its pool size), " +
        `or the server is overloaded; ${describeBudget(limits.budget, limits.pooled)}`,
    )), limitMs);
  });
  const checking = check();
  // A check the bound cut short fails later, when its connections are closed: that is expected.
  checking.catch(() => {});
  try {
    return await Promise.race([checking, timedOut]);
  } catch (error) {
    throw explainDatabaseError(error, {
      source: settings.source,
      server: describeServer(settings),
      step: "connecting",
      sslMode: settings.ssl.mode,
      connectionBudget: describeBudget(limits.budget, limits.pooled),
    }) ?? error;
  } finally {
    clearTimeout(timer);
  }
}

/** A GUC duration as Postgres shows it (`30s`, `5min`, `0`) in seconds; null for none. */
function seconds(value: string | null): number | null {
  const match = value?.match(/^(\d+)(ms|s|min|h|d)?$/);
  if (!match) return null;
  const factor = { ms: 0.001, s: 1, min: 60, h: 3600, d: 86400 }[match[2] ?? "ms"] ?? 0.001;
  const result = Number(match[1]) * factor;
  return result > 0 ? result : null;
}
