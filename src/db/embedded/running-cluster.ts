/**
 * This data folder's Postgres, when one is already running: left by a
 * Dispatch process that is gone (killed outright, so it could not stop it),
 * or running for another Dispatch process (a second `dispatch start`, an
 * operator command beside the service). It is known by its `postmaster.pid`,
 * which names a live process, the port it listens on and its state; and it is
 * taken for this folder's only once the server on that port says its data
 * directory is this folder. A live process that fails that test is never
 * signalled: the start stops, saying what to check.
 */
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { isAlive } from "./cluster-users";
import { EmbeddedDatabaseError } from "./errors";

/** This folder's running Postgres. */
export interface RunningCluster {
  pid: number;
  port: number;
}

/** How long a server that is starting or stopping is waited for, and how long a shutdown may take. */
const SETTLE_MS = 30_000;

/**
 * The Postgres running on `cluster`, or null when none is (no postmaster.pid,
 * or one its server left behind when it died). `connect` opens a client on a
 * port, as the cluster's superuser.
 */
export async function findRunningCluster(cluster: string, connect: (port: number) => postgres.Sql): Promise<RunningCluster | null> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const pidFile = readPidFile(cluster);
    if (pidFile === null || !isAlive(pidFile.pid)) return null;
    // Being started or stopped by another process: wait for it to settle.
    if (pidFile.status !== "ready" && Date.now() < deadline) {
      await sleep(100);
      continue;
    }
    if (await servesFolder(pidFile.port, cluster, connect)) return { pid: pidFile.pid, port: pidFile.port };
    throw new EmbeddedDatabaseError(
      `${join(cluster, "postmaster.pid")} names process ${pidFile.pid}, which is alive but is not this folder's Postgres ` +
        `(nothing on port ${pidFile.port} serves ${cluster}). If no Postgres runs on this folder, delete that file and start again.`,
    );
  }
}

/** Stops a running cluster (fast shutdown, then immediate); resolves once its server is gone. */
export async function stopRunningCluster(running: RunningCluster): Promise<void> {
  for (const [signal, waitMs] of [["SIGINT", SETTLE_MS], ["SIGQUIT", 10_000]] as const) {
    try {
      process.kill(running.pid, signal);
    } catch {
      return;
    }
    const until = Date.now() + waitMs;
    while (isAlive(running.pid) && Date.now() < until) await sleep(50);
    if (!isAlive(running.pid)) return;
  }
  throw new EmbeddedDatabaseError(`the embedded Postgres (pid ${running.pid}) did not stop; stop it and start again`);
}

/** postmaster.pid: line 1 the pid, line 4 the port, line 8 the state (Postgres 10 and later). */
function readPidFile(cluster: string): { pid: number; port: number; status: string } | null {
  let lines: string[];
  try {
    lines = readFileSync(join(cluster, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return null;
  return { pid, port, status: (lines[7] ?? "").trim() };
}

/** Whether the server on `port` answers and runs on `cluster`. */
async function servesFolder(port: number, cluster: string, connect: (port: number) => postgres.Sql): Promise<boolean> {
  const sql = connect(port);
  try {
    const [row] = await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`;
    return realpathSync(row!.dir) === realpathSync(cluster);
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
