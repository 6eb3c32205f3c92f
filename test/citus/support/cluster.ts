/**
 * A Citus cluster of private servers for the Citus suite (`npm run test:citus`):
 * a coordinator and two workers, each a private Postgres of the machine's
 * binaries with Citus preloaded (installed by `cluster.sh build` of the shared
 * tools, from Citus's own source). The nodes trust loopback connections, as
 * Citus's own test clusters do, so the coordinator reaches the workers as the
 * same superuser without a password.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createSql } from "../../../src/db/client";
import { withDatabase } from "../../support/global-setup";
import { postgresInstallation } from "../../managed/support/machine";
import { type PrivateServer, startPrivateServer } from "../../managed/support/server";

/** A running cluster: the coordinator and the workers. */
export interface CitusCluster {
  coordinator: PrivateServer;
  workers: PrivateServer[];
  stop(): Promise<void>;
}

/** Whether the machine's Postgres has Citus installed. */
export function citusInstalled(): boolean {
  try {
    return existsSync(join(postgresInstallation(), "lib", "citus.so"));
  } catch {
    return false;
  }
}

/**
 * Starts a coordinator and `workers` workers (not yet joined: `makeDistributedDatabase` joins them per database).
 * `durable: false` (the suite's) turns off what only a machine crash needs; the benchmark keeps it, and adds
 * pg_stat_statements, as its own server does (bench/database.ts).
 */
export async function startCitusCluster(workers = 2, { durable = false } = {}): Promise<CitusCluster> {
  const start = () =>
    startPrivateServer({
      hba: ["host all all 127.0.0.1/32 trust"],
      settings: citusSettings(durable),
    });
  const nodes = await Promise.all(Array.from({ length: workers + 1 }, start));
  return {
    coordinator: nodes[0]!,
    workers: nodes.slice(1),
    stop: async () => void (await Promise.all(nodes.map((node) => node.stop()))),
  };
}

/**
 * A node's settings. Nodes reach each other without TLS (the server, run as `postgres` under root, cannot read
 * root's client files). Connections to spare: each coordinator session may open several to each worker (Citus's
 * adaptive executor), and two test files run at once; background workers for Citus's maintenance daemon of each
 * database (distributed deadlock detection, two-phase commit recovery).
 */
export function citusSettings(durable: boolean): string[] {
  return [
    ...["-c", `shared_preload_libraries=${durable ? "citus,pg_stat_statements" : "citus"}`, "-c", "citus.node_conninfo=sslmode=disable"],
    ...["-c", "max_connections=1000", "-c", "max_worker_processes=128"],
    // A throwaway cluster, as the main suite's (test/support/global-setup.ts). The benchmark's counts its
    // workers' rows in pg_stat_user_tables, where Citus shows the shards only to the clients it is told to.
    ...(durable ? ["-c", "citus.show_shards_for_app_name_prefixes=*"] : ["-c", "fsync=off", "-c", "full_page_writes=off"]),
    // The suite's databases in 4 shards a table, not Citus's 32: two on each worker still (what the suite checks),
    // and a statement across the shards opens a connection per shard it runs on in parallel, up to 16 a worker.
    // With 32, two files at once kept about a thousand server processes busy on a two-core machine (load 43-82)
    // and hooks timed out; with 4, at most about 500 (load up to 21) and the run went through in 9.5 minutes
    // (less again since each file's databases are dropped at its end: drop-databases.ts). The benchmark keeps
    // the default.
    ...(durable ? [] : ["-c", "citus.shard_count=4"]),
  ];
}

/**
 * Makes database `name` on every node with the `citus` extension, and joins the
 * workers to the coordinator in it (Citus keeps its node list per database).
 * Returns the coordinator's URL of it.
 */
export async function makeDistributedDatabase(coordinatorUrl: string, workerUrls: string[], name: string): Promise<string> {
  const url = await makeDatabaseOnEveryNode(coordinatorUrl, workerUrls, name, true);
  await joinWorkers(coordinatorUrl, workerUrls, name);
  return url;
}

/**
 * Makes database `name` on every node, with the `citus` extension on the
 * workers, and on the coordinator too when `citusOnCoordinator` (else the
 * coordinator's is a plain database until `joinWorkers`). Returns the
 * coordinator's URL of it.
 */
export async function makeDatabaseOnEveryNode(coordinatorUrl: string, workerUrls: string[], name: string, citusOnCoordinator: boolean): Promise<string> {
  for (const url of [coordinatorUrl, ...workerUrls]) {
    const admin = createSql(url, 1);
    await admin.unsafe(`create database ${name}`).finally(() => admin.end());
    if (url === coordinatorUrl && !citusOnCoordinator) continue;
    const database = createSql(withDatabase(url, name), 1);
    await database`create extension if not exists citus`.finally(() => database.end());
  }
  return withDatabase(coordinatorUrl, name);
}

/**
 * Drops database `name` from every node, ending the sessions still in it: a distributed database keeps a
 * maintenance daemon on each node (and the daemon's connections to the workers) until it is dropped.
 */
export async function dropDatabaseOnEveryNode(coordinatorUrl: string, workerUrls: string[], name: string): Promise<void> {
  for (const url of [coordinatorUrl, ...workerUrls]) {
    const admin = createSql(url, 1);
    await admin.unsafe(`drop database if exists ${name} with (force)`).finally(() => admin.end());
  }
}

/** Creates the `citus` extension in the coordinator's database `name` (if missing) and joins the workers to it. */
export async function joinWorkers(coordinatorUrl: string, workerUrls: string[], name: string): Promise<void> {
  // One file at a time: adding a node copies the roles to it, which are the cluster's, not the database's, and
  // two such copies at once fail ("tuple concurrently updated").
  const admin = createSql(coordinatorUrl, 1);
  const coordinator = createSql(withDatabase(coordinatorUrl, name), 1);
  try {
    await admin`select pg_advisory_lock(hashtext('dispatch test: citus_add_node'))`;
    await coordinator`create extension if not exists citus`;
    await coordinator`select citus_set_coordinator_host('127.0.0.1', ${Number(new URL(coordinatorUrl).port)})`;
    for (const url of workerUrls) await coordinator`select citus_add_node('127.0.0.1', ${Number(new URL(url).port)})`;
  } finally {
    await coordinator.end();
    await admin.end();
  }
}
