/**
 * Brings a database up to date: the app's drizzle-kit migrations (schema
 * `dispatch`) and graphile-worker's own (schema `graphile_worker`), on the
 * direct connection (connection/endpoints.ts). A database already up to date
 * is only read, so a role with nothing but USAGE and DML can start on it;
 * `DISPATCH_MIGRATE=false` does not even try, and refuses a schema that is
 * behind (`requireCurrentSchema`).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as drizzleMigrate } from "drizzle-orm/postgres-js/migrator";
// graphile-worker's migrations as it ships them: how many there are is how far its schema must be.
import { migrations as graphileMigrations } from "graphile-worker/dist/generated/sql.js";
import { dropRetiredFunctions, makeDelegatedFunctions } from "./citus/delegated";
import { claimsDistributed, distributeClaims, distributeTables, hasCitus, isDistributed } from "./citus/layout";
import { createSql, type Sql, type Tx } from "./client";
import { createNodePostgresPool, nodePostgresConfig } from "./connection/drivers";
import { DatabaseStartError, sqlState } from "./connection/errors";
import { parseConnectionUrl } from "./connection/settings";
import { type Endpoint, resolveEndpoint } from "./connection/transport";
import { CLAIM_ON_NODE } from "./queries/claim-by-project";
import { RECORD_DELIVERED_ON_NODE, RECORD_DELIVERED_ON_NODE_BEFORE } from "./queries/record-delivered";
import { releaseClaimsWithoutProject } from "./queries/sweep-claims";

/** The migrations folder of the package: two levels up from src/db/, one from the compiled dist/. */
const MIGRATIONS = ["../../sql/migrations", "../sql/migrations"]
  .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
  .find((folder) => existsSync(folder))!;

/**
 * Applies every pending migration on `target` (an endpoint, or a URL); safe to run concurrently from several
 * replicas. Resolves with whether the tables are distributed (a Citus database: db/citus/layout.ts).
 * `session`, a pool of one connection to `target`, is used (and left open) instead of a connection of its own.
 */
export async function migrate(target: Endpoint | string, session?: Sql): Promise<boolean> {
  const direct = typeof target === "string" ? await resolveEndpoint(parseConnectionUrl(target, "the database URL")) : target;
  // One connection, so the session-level advisory lock covers the whole migration.
  const client = session ?? createSql(direct, 1);
  try {
    await client`select pg_advisory_lock(hashtext('dispatch.migrate'))`;
    // drizzle's migrator always runs CREATE SCHEMA IF NOT EXISTS, which needs CREATE on the database.
    if ((await appSchemaStatus(client)) !== "current") {
      await drizzleMigrate(drizzle(client), { migrationsFolder: MIGRATIONS, migrationsSchema: "dispatch" });
    }
    // graphile-worker's own, through its driver, only when some are pending: a start or a command on a
    // current schema opens no node-postgres connection and does not load graphile-worker here.
    if ((await graphileSchemaStatus(client)) === "behind") {
      const { Logger, runMigrations } = await import("graphile-worker");
      const pool = createNodePostgresPool(nodePostgresConfig(direct, 1));
      try {
        // graphile-worker logs each migration at info level; start-up output stays our own banner.
        await runMigrations({ pgPool: pool, logger: new Logger(() => () => {}) });
      } finally {
        await pool.end();
      }
    }
    const citus = await hasCitus(client);
    if (citus) await layOutOnCitus(client);
    await client`select pg_advisory_unlock(hashtext('dispatch.migrate'))`;
    return citus;
  } finally {
    // A failure above leaves the lock to the session's end: its owner ends it.
    if (session === undefined) await client.end();
  }
}

/**
 * On Citus, the tables are distributed once, after the migrations that made them (db/citus/layout.ts), the
 * claims too (in a later migration for a database distributed before they were), and the functions whose
 * calls Citus delegates to a project's node are made again when they are not this build's
 * (db/citus/delegated.ts).
 */
async function layOutOnCitus(client: Sql): Promise<void> {
  if (!(await isDistributed(client))) await client.begin((tx) => distributeTables(tx));
  if (!(await claimsDistributed(client))) {
    await client.begin(async (tx) => {
      await releaseClaimsWithoutProject(tx);
      await distributeClaims(tx);
    });
  }
  await client.begin(async (tx) => {
    await makeDelegatedFunctions(tx, [RECORD_DELIVERED_ON_NODE, CLAIM_ON_NODE]);
    await dropRetiredFunctions(tx, [RECORD_DELIVERED_ON_NODE_BEFORE]);
  });
}

/** How the database's migrations compare with the ones this build carries. */
export type MigrationStatus = "current" | "behind" | "ahead";

/** Whether every migration of this build is applied (and no newer one). */
export async function migrationStatus(sql: Tx): Promise<MigrationStatus> {
  const app = await appSchemaStatus(sql);
  return app !== "current" ? app : graphileSchemaStatus(sql);
}

/**
 * For `DISPATCH_MIGRATE=false`: the start goes on only when the schema is
 * this build's (or newer, from a build being rolled out); otherwise it stops
 * saying to run `dispatch migrate`.
 */
export async function requireCurrentSchema(sql: Tx): Promise<void> {
  const status = await migrationStatus(sql).catch((error: unknown) => {
    // 42P01: no such table, 3F000: no such schema: nothing was ever migrated here.
    if (sqlState(error) === "42P01" || sqlState(error) === "3F000") return "missing" as const;
    throw error;
  });
  if (status === "current" || status === "ahead") return;
  throw new DatabaseStartError(
    `the database's schema is ${status === "missing" ? "not there" : "behind this build"} and DISPATCH_MIGRATE=false: ` +
      'run "dispatch migrate" as a role that may create in the database (README "Database privileges"), then start again',
  );
}

/** graphile-worker's migrations: the last applied against the last it ships (a missing schema or table counts as none applied). */
async function graphileSchemaStatus(sql: Tx): Promise<MigrationStatus> {
  const [table] = await sql<{ exists: boolean }[]>`select to_regclass('graphile_worker.migrations') is not null as exists`;
  if (!table?.exists) return "behind";
  const [row] = await sql<{ id: number | null }[]>`select max(id)::int as id from graphile_worker.migrations`;
  const latest = Object.keys(graphileMigrations).length;
  return (row?.id ?? 0) === latest ? "current" : (row?.id ?? 0) < latest ? "behind" : "ahead";
}

/** drizzle's migrations: applied count against the journal's (a missing table counts as none applied). */
async function appSchemaStatus(sql: Tx): Promise<MigrationStatus> {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, "utf8")) as { entries: unknown[] };
  const [table] = await sql<{ exists: boolean }[]>`select to_regclass('dispatch.__drizzle_migrations') is not null as exists`;
  if (!table?.exists) return "behind";
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from dispatch.__drizzle_migrations`;
  return row!.n === journal.entries.length ? "current" : row!.n < journal.entries.length ? "behind" : "ahead";
}
