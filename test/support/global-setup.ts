/**
 * Starts one Postgres for the whole run (embedded unless
 * DISPATCH_TEST_DATABASE_URL names a server) and migrates a template database
 * that every test file clones: a fresh database per file in milliseconds.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { createSql } from "../../src/db/client";
import { startEmbeddedPostgres } from "../../src/db/embedded/cluster";
import { migrate } from "../../src/db/migrate";

export const TEMPLATE = "dispatch_test_template";
const TEST_CLUSTER_SETTINGS = { fsync: "off", full_page_writes: "off" };
/** Prefix of the per-file databases, dropped at the end of the run. */
export const TEST_DATABASE_PREFIX = "dispatch_test_";

declare module "vitest" {
  export interface ProvidedContext {
    adminUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // Processes the tests start run bin/dispatch.js, which runs the compiled dist/: build it from src/ now.
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: "inherit" });
  const external = process.env.DISPATCH_TEST_DATABASE_URL;
  // The run's temporary files in memory too (the test files' own clusters, project copies, dumps): the workers and
  // the processes they start take TMPDIR from here.
  const scratch = inMemoryScratch();
  if (scratch) process.env.TMPDIR = scratch;
  const dataDir = external ? null : mkdtempSync(join(tmpdir(), "dispatch-test-"));
  // Under root, Postgres runs as user postgres: a folder it can enter keeps the cluster here, not in /var/lib/dispatch.
  if (dataDir) chmodSync(dataDir, 0o755);
  // A throwaway cluster: what only a machine crash needs (fsync, full pages in WAL) would cost every commit of
  // the run. No test crashes this machine; the tests that crash Postgres run their own clusters.
  const cluster = external ? null : await startEmbeddedPostgres(dataDir!, { maxConnections: 400, settings: TEST_CLUSTER_SETTINGS });
  const adminUrl = external ?? cluster!.url;
  const admin = createSql(adminUrl, 1);
  await admin.unsafe(`drop database if exists ${TEMPLATE}`);
  await admin.unsafe(`create database ${TEMPLATE}`);
  await migrate(withDatabase(adminUrl, TEMPLATE));
  await admin.end();
  project.provide("adminUrl", adminUrl);
  return async () => {
    if (external) await dropTestDatabases(adminUrl);
    await cluster?.stop();
    // The cluster is elsewhere if root had to relocate it (a TMPDIR user postgres cannot enter).
    for (const dir of [cluster?.directory, dataDir, scratch]) if (dir) rmSync(dir, { recursive: true, force: true });
  };
}

/** Free space the run may take in memory: its cluster (about 200 databases of 10 MB, and WAL), the files' own. */
const IN_MEMORY_ROOM = 4 * 2 ** 30;

/**
 * A temporary folder in memory (/dev/shm) for the run, when it has the room;
 * else null (the machine's temporary folder serves). Each test file's
 * database is a copy of the template, some 1,000 files, and several files
 * make clusters of their own: on a virtual machine's disk a copy cost
 * 0.2-0.3 s of kernel time (about 40 CPU-s of a run), in memory 8 ms.
 * Nothing is lost: what the run makes there is removed at its end, and the
 * test clusters survive no crash anyway (fsync off). Anyone may enter it
 * (mode 1777, as /tmp), so that Postgres run as `postgres` under root can.
 */
export function inMemoryScratch(): string | null {
  try {
    removeAbandonedScratch();
    const { bavail, bsize } = statfsSync("/dev/shm");
    if (bavail * bsize < IN_MEMORY_ROOM) return null;
    const dir = mkdtempSync(join("/dev/shm", SCRATCH_PREFIX));
    chmodSync(dir, 0o1777);
    writeFileSync(join(dir, "run.pid"), String(process.pid));
    return dir;
  } catch {
    // No /dev/shm (not Linux), or not writable: the temporary folder.
    return null;
  }
}

const SCRATCH_PREFIX = "dispatch-run-";

/** Removes the in-memory folders of runs that ended without removing theirs (killed): memory is not freed at reboot only. */
function removeAbandonedScratch(): void {
  for (const name of readdirSync("/dev/shm").filter((entry) => entry.startsWith(SCRATCH_PREFIX))) {
    const dir = join("/dev/shm", name);
    let pid = Number.NaN;
    try {
      pid = Number(readFileSync(join(dir, "run.pid"), "utf8"));
    } catch {
      // Made and not yet stamped, or not ours: left alone.
      continue;
    }
    if (!isAlive(pid)) rmSync(dir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** `url` pointing at database `name` instead. */
export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Drops the template and every per-file database of the run from an external server. */
async function dropTestDatabases(adminUrl: string): Promise<void> {
  const admin = createSql(adminUrl, 1);
  try {
    const rows = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`${TEST_DATABASE_PREFIX}%`}`;
    for (const { datname } of rows) await admin.unsafe(`drop database if exists "${datname}" with (force)`);
  } finally {
    await admin.end();
  }
}
