/**
 * Roles and empty databases on the run's server, for the tests of what a
 * managed database's least-privilege roles and limits do. Roles belong to the
 * whole server, so each gets a random name; `dropMade` removes them.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import { createSql } from "../../src/db/client";
import { cloneDatabase } from "./database";
import { TEST_DATABASE_PREFIX, withDatabase } from "./global-setup";

const made: string[] = [];
const databases: string[] = [];

/** A login role: its name, and the URL of `database`'s server signed in as it. */
export interface TestRole {
  name: string;
  urlFor(databaseUrl: string): string;
}

/** Runs `statements` as the server's superuser (on `databaseUrl`, or the server's admin database). */
export async function asAdmin(statements: string, databaseUrl = inject("adminUrl")): Promise<void> {
  const admin = createSql(databaseUrl, 1);
  try {
    await admin.unsafe(statements);
  } finally {
    await admin.end();
  }
}

/** Creates a login role with `options` (e.g. `CONNECTION LIMIT 6`). */
export async function createRole(options = ""): Promise<TestRole> {
  const name = `dispatch_role_${randomBytes(5).toString("hex")}`;
  const password = randomBytes(9).toString("hex");
  await asAdmin(`create role ${name} login password '${password}' ${options}`);
  made.push(name);
  return {
    name,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.username = name;
      url.password = password;
      return url.toString();
    },
  };
}

/** Creates an empty database (owned by the superuser, dropped by `dropMade`) and returns its URL, with its name. */
export async function emptyDatabase(): Promise<{ url: string; name: string }> {
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString("hex")}`;
  await asAdmin(`create database ${name}`);
  databases.push(name);
  return { url: withDatabase(inject("adminUrl"), name), name };
}

/** A database cloned from the migrated template (cloneDatabase), dropped by `dropMade` with the roles granted on it. */
export async function migratedDatabase(): Promise<{ url: string; name: string }> {
  const url = await cloneDatabase();
  const name = new URL(url).pathname.slice(1);
  databases.push(name);
  return { url, name };
}

/** Drops the databases and roles this file made (databases first: they hold the roles' grants and objects). */
export async function dropMade(): Promise<void> {
  const admin = createSql(inject("adminUrl"), 1);
  try {
    for (const name of databases.splice(0)) await admin.unsafe(`drop database if exists ${name} with (force)`);
    for (const role of made.splice(0)) await admin.unsafe(`drop role if exists ${role}`);
  } finally {
    await admin.end();
  }
}

/**
 * The README's GRANT statements of `block` ("migrate" or "runtime": the SQL
 * under "Database privileges"), with its example names replaced: the test runs
 * exactly what the README tells operators to run.
 */
export function readmeGrants(block: "migrate" | "runtime", names: { database: string; owner: string; runtime: string }): string {
  const readme = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");
  const section = readme.slice(readme.indexOf("### Database privileges"));
  const sql = section.match(new RegExp("```sql\\n(-- " + block + "[\\s\\S]*?)```"))?.[1];
  if (!sql) throw new Error(`README "Database privileges" has no \`\`\`sql block starting "-- ${block}"`);
  return sql
    .replace(/\bdispatch_db\b/g, names.database)
    .replace(/\bdispatch_owner\b/g, names.owner)
    .replace(/\bdispatch_app\b/g, names.runtime);
}
