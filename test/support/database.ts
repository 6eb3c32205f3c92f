/**
 * A fresh database per test file, cloned from the migrated template; in the
 * Citus suite (test/citus/global-setup.ts), made on every node of the cluster
 * and migrated, which distributes it.
 */
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createSql, type Sql } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { dropDatabaseOnEveryNode, makeDistributedDatabase } from "../citus/support/cluster";
import { TEMPLATE, TEST_DATABASE_PREFIX, withDatabase } from "./global-setup";

/** Whether the run's server takes `STRATEGY FILE_COPY` (Postgres 15+), asked once per process. */
let fileCopy: Promise<boolean> | undefined;
/**
 * The connection this worker process makes its files' databases on: one for all of them (a connection
 * costs the server and this process about 12 ms of CPU, SCRAM included, some 150 times a run), closed
 * after a minute unused.
 */
let admin: Sql | undefined;

/** The databases this process made on the Citus cluster that are not dropped yet. */
const madeOnCluster: string[] = [];

/**
 * Drops the databases this process made on the Citus cluster (the Citus suite's setup file calls it at the
 * end of each file); the main suite's stay until its cluster stops, as a plain database costs nothing idle.
 */
export async function dropClusterDatabases(): Promise<void> {
  const citusWorkers = inject("citusWorkers");
  if (citusWorkers === undefined) return;
  for (const name of madeOnCluster.splice(0)) await dropDatabaseOnEveryNode(inject("adminUrl"), citusWorkers, name);
}

/**
 * Creates a new database from the template and returns its URL. Postgres 15
 * and later copy the template through the WAL by default; the template's
 * files copied as they are (one checkpoint; no crash of this cluster is
 * recovered) take a quarter less time and spare the WAL a copy of it.
 */
export async function cloneDatabase(): Promise<string> {
  const adminUrl = inject("adminUrl");
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString("hex")}`;
  const citusWorkers = inject("citusWorkers");
  if (citusWorkers !== undefined) {
    madeOnCluster.push(name);
    const url = await makeDistributedDatabase(adminUrl, citusWorkers, name);
    await migrate(url);
    return url;
  }
  admin ??= createSql(adminUrl, 1, { idleTimeoutSeconds: 60 });
  fileCopy ??= admin<{ version: number }[]>`select current_setting('server_version_num')::int as version`.then(([server]) => server!.version >= 150000);
  await admin.unsafe(`create database ${name} template ${TEMPLATE}${(await fileCopy) ? " strategy file_copy" : ""}`);
  return withDatabase(adminUrl, name);
}
