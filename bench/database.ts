/**
 * The benchmark's Postgres server: an embedded cluster in a temporary folder,
 * or the server named by `DATABASE_URL`. Every database the run creates is
 * fresh, prefixed `dispatch_bench_`, and dropped before the run ends.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSql, type Sql } from "../src/db/client";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../src/db/embedded/cluster";
import { bounded } from "./stats";

/** Prefix of every database a run creates. */
const PREFIX = "dispatch_bench_";

/** A Postgres server the run may create and drop databases on. */
export interface DatabaseServer {
  /** Whether the run started this server itself (embedded) or was given one. */
  embedded: boolean;
  /** URL of the server's `postgres` database (or the given one), where cluster-wide views are read. */
  adminUrl: string;
  /** Whether `pg_stat_statements` can be read at `adminUrl` (preloaded and created there). */
  statementStats: boolean;
  /** Process id of the embedded cluster's postmaster (null for an external server). */
  postmasterPid: number | null;
  /** `select version()` of the server. */
  version: string;
  /** Settings that shape commit throughput, as the server reports them. */
  settings: Record<string, string>;
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(label: string): Promise<string>;
  /** Drops a database made by `createDatabase` (connections are terminated). */
  dropDatabase(url: string): Promise<void>;
  /** Drops every database the run made, and stops the server if embedded. */
  stop(): Promise<void>;
}

/** Starts an embedded cluster, or connects to `externalUrl` when given. */
export async function startDatabaseServer(externalUrl: string | undefined): Promise<DatabaseServer> {
  const dataDir = externalUrl ? null : mkdtempSync(join(tmpdir(), "dispatch-bench-"));
  // Under root, Postgres runs as another user that must be able to enter the folder.
  if (dataDir) chmodSync(dataDir, 0o755);
  const cluster = dataDir ? await startWithStatementStats(dataDir) : null;
  const adminUrl = externalUrl ?? cluster!.url;
  const admin = createSql(adminUrl, 1);
  const created = new Set<string>();
  const runTag = randomBytes(3).toString("hex");
  let counter = 0;
  try {
    // The first line of postmaster.pid is the postmaster's process id.
    const postmasterPid = dataDir ? Number(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]) : null;
    const [{ version }] = (await admin`select version()`) as unknown as [{ version: string }];
    const rows = await admin<{ name: string; setting: string }[]>`
      select name, setting from pg_settings
      where name in ('synchronous_commit', 'fsync', 'shared_buffers', 'max_connections', 'wal_level')`;
    const statementStats = await enableStatementStats(admin);
    return {
      embedded: cluster !== null,
      adminUrl,
      statementStats,
      postmasterPid,
      version,
      settings: Object.fromEntries(rows.map((row) => [row.name, row.setting])),
      async createDatabase(label) {
        const name = `${PREFIX}${runTag}_${counter++}_${label.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}`;
        await admin.unsafe(`create database "${name}"`);
        created.add(name);
        return withDatabase(adminUrl, name);
      },
      async dropDatabase(url) {
        const name = new URL(url).pathname.slice(1);
        await admin.unsafe(`drop database if exists "${name}" with (force)`);
        created.delete(name);
      },
      async stop() {
        try {
          if (postmasterPid === null || alive(postmasterPid)) {
            for (const name of created) await bounded(admin.unsafe(`drop database if exists "${name}" with (force)`), 10_000, `dropping ${name}`);
          }
        } finally {
          await bounded(admin.end({ timeout: 2 }), 5_000, "closing the admin connection").catch(() => {});
          try {
            // A cluster that already died needs no stop, and its pid must not get the SIGKILL below.
            if (cluster && alive(postmasterPid!)) await bounded(cluster.stop(), 15_000, "stopping Postgres");
          } catch (error) {
            process.kill(postmasterPid!, "SIGKILL");
            throw error;
          } finally {
            if (dataDir) rmSync(dataDir, { recursive: true, force: true });
          }
        }
      },
    };
  } catch (error) {
    await admin.end({ timeout: 5 });
    await cluster?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Starts the embedded cluster with `pg_stat_statements` preloaded: the
 * binaries ship the library, but the cluster's flags are fixed, so the
 * setting goes in through ALTER SYSTEM and the cluster is restarted once on
 * the same port.
 */
async function startWithStatementStats(dataDir: string): Promise<EmbeddedDatabase> {
  const first = await startEmbeddedPostgres(dataDir, { maxConnections: 300 });
  const sql = createSql(first.url, 1);
  try {
    await sql`alter system set shared_preload_libraries = 'pg_stat_statements'`;
  } finally {
    await sql.end({ timeout: 5 });
    await first.stop();
  }
  return startEmbeddedPostgres(dataDir, { maxConnections: 300, port: first.port });
}

/** Creates the `pg_stat_statements` view where `admin` connects, if the server preloads it; returns whether it is readable. */
async function enableStatementStats(admin: Sql): Promise<boolean> {
  try {
    await admin`create extension if not exists pg_stat_statements`;
    await admin`select count(*) from pg_stat_statements`;
    return true;
  } catch {
    return false;
  }
}

/** Whether process `pid` still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `url` pointing at database `name` instead. */
function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
