/**
 * Brings a database up to date: the app's drizzle-kit migrations (schema
 * `dispatch`) and graphile-worker's own (schema `graphile_worker`).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as drizzleMigrate } from "drizzle-orm/postgres-js/migrator";
import { Logger, runMigrations } from "graphile-worker";
import postgres from "postgres";
import type { Tx } from "./client";

/** The migrations folder of the package: two levels up from src/db/, one from the compiled dist/. */
const MIGRATIONS = ["../../sql/migrations", "../sql/migrations"]
  .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
  .find((folder) => existsSync(folder))!;

/** graphile-worker logs each migration at info level; start-up output stays our own banner. */
const quietLogger = new Logger(() => () => {});

/** Applies every pending migration; safe to run concurrently from several replicas. */
export async function migrate(url: string): Promise<void> {
  // One connection, so the session-level advisory lock covers the whole migration.
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(hashtext('dispatch.migrate'))`;
    await drizzleMigrate(drizzle(client), { migrationsFolder: MIGRATIONS, migrationsSchema: "dispatch" });
    await runMigrations({ connectionString: url, logger: quietLogger });
    await client`select pg_advisory_unlock(hashtext('dispatch.migrate'))`;
  } finally {
    await client.end();
  }
}

/** How the database's migrations compare with the ones this build carries. */
export type MigrationStatus = "current" | "behind" | "ahead";

/** Whether every migration of this build is applied (and no newer one). */
export async function migrationStatus(sql: Tx): Promise<MigrationStatus> {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, "utf8")) as { entries: unknown[] };
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from dispatch.__drizzle_migrations`;
  return row!.n === journal.entries.length ? "current" : row!.n < journal.entries.length ? "behind" : "ahead";
}
