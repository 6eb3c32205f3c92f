/**
 * Databases as an earlier version left them: the app's migrations applied up
 * to a given one (and graphile-worker's), for the tests of upgrades.
 */
import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as drizzleMigrate } from "drizzle-orm/postgres-js/migrator";
import { Logger, runMigrations } from "graphile-worker";
import { inject } from "vitest";
import { createSql } from "../../src/db/client";
import { TEST_DATABASE_PREFIX, withDatabase } from "./global-setup";

const MIGRATIONS = fileURLToPath(new URL("../../sql/migrations", import.meta.url));

/** A new database of the run, migrated up to and including `last` (a migration's tag); its URL. */
export async function databaseMigratedUpTo(last: string): Promise<string> {
  const admin = createSql(inject("adminUrl"), 1);
  const name = `${TEST_DATABASE_PREFIX}upgrade_${randomBytes(6).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = withDatabase(inject("adminUrl"), name);
  await migrateUpTo(url, last);
  return url;
}

/** Applies the app's migrations up to and including `last`, and graphile-worker's. */
async function migrateUpTo(url: string, last: string): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), "dispatch-migrations-"));
  try {
    cpSync(MIGRATIONS, folder, { recursive: true });
    const journalFile = join(folder, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
    journal.entries = journal.entries.slice(0, journal.entries.findIndex((entry) => entry.tag === last) + 1);
    writeFileSync(journalFile, JSON.stringify(journal));
    const client = createSql(url, 1);
    await drizzleMigrate(drizzle(client), { migrationsFolder: folder, migrationsSchema: "dispatch" });
    await client.end();
    await runMigrations({ connectionString: url, logger: new Logger(() => () => {}) });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
