/**
 * Brings a database up to date: the app's drizzle-kit migrations (schema
 * `dispatch`) and graphile-worker's own (schema `graphile_worker`).
 */
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as drizzleMigrate } from "drizzle-orm/postgres-js/migrator";
import { Logger, runMigrations } from "graphile-worker";
import postgres from "postgres";

const MIGRATIONS = fileURLToPath(new URL("../../sql/migrations", import.meta.url));

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
