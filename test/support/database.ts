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
    return patientUrl(url);
  }
  admin ??= createSql(adminUrl, 1, { idleTimeoutSeconds: 60 });
  fileCopy ??= admin<{ version: number }[]>`select current_setting('server_version_num')::int as version`.then(([server]) => server!.version >= 150000);
  await admin.unsafe(`create database ${name} template ${TEMPLATE}${(await fileCopy) ? " strategy file_copy" : ""}`);
  return patientUrl(withDatabase(adminUrl, name));
}

/** The `connect_timeout` of the databases the tests are given, in seconds. */
const TEST_CONNECT_TIMEOUT_SECONDS = 30;

/**
 * `url` with a connect timeout of 30 s instead of the default 5. A service answers 503 when a new
 * connection takes longer than that, as it should when a real server is away; but the run's own server is
 * never away unless a test stops it (refused at once, whatever the timeout), and on a loaded CI machine a
 * connection whose handshake waits on a test process's busy event loop (a workflow test parsing megabytes
 * of steps) once took over 5 s: a 503 that failed a run with retries 0. No test measures this timeout on
 * these URLs (those that do set their own).
 */
function patientUrl(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("connect_timeout", String(TEST_CONNECT_TIMEOUT_SECONDS));
  return parsed.toString();
}
