/**
 * A private Postgres cluster of the machine's Debian binaries, as a managed
 * provider runs one: TLS with a certificate from a private CA, a pg_hba.conf
 * of the test's choosing (hostssl only, client certificates), server settings.
 * Under root it runs as the `postgres` account, like the embedded database.
 */
import { chmodSync, chownSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../src/db/embedded/cluster";
import { type Account, postgresAccount } from "../../../src/db/embedded/postgres-account";
import { initdb, startPostgres } from "../../../src/db/embedded/postgres-process";
import type { Certificates } from "./certificates";
import { postgresInstallation } from "./machine";

/** A running private server. */
export interface PrivateServer {
  port: number;
  /** The folder of its binaries (`bin/pg_dump`, ...). */
  installation: string;
  /** The superuser's URL of `database` (default `postgres`), with `params` (default `sslmode=disable`, or `require` with TLS). */
  url(database?: string, params?: string): string;
  stop(): Promise<void>;
}

/** What the server is started with. */
export interface ServerOptions {
  /** Serve TLS with these certificates (the CA also checks client certificates). */
  certificates?: Certificates;
  /** pg_hba.conf lines; by default every host connection with a password. */
  hba?: string[];
  /** `-c name=value` settings. */
  settings?: string[];
}

export const SUPERUSER = "dispatch";
const PASSWORD = "dispatch";

/** Creates and starts a cluster in a new temporary folder. */
export async function startPrivateServer(options: ServerOptions = {}): Promise<PrivateServer> {
  const installation = postgresInstallation();
  const root = mkdtempSync(join(tmpdir(), "dispatch-server-"));
  chmodSync(root, 0o755);
  const account = process.getuid?.() === 0 ? await postgresAccount() : null;
  const run = { native: installation, cluster: join(root, "pg"), account, log: () => {} };
  await initdb(run, SUPERUSER, PASSWORD);
  const hba = options.hba ?? ["host all all 127.0.0.1/32 scram-sha-256", "host all all ::1/128 scram-sha-256"];
  writeOwned(join(run.cluster, "pg_hba.conf"), `local all all trust\n${hba.join("\n")}\n`, account);
  const tls = options.certificates ? tlsSettings(options.certificates, run.cluster, account) : [];
  const port = await freePort();
  const flags = ["-c", "listen_addresses=127.0.0.1,::1", "-c", "unix_socket_directories=", ...tls, ...(options.settings ?? [])];
  const server = await startPostgres(run, port, flags);
  const defaultParams = options.certificates ? "sslmode=require" : "sslmode=disable";
  return {
    port,
    installation,
    url: (database = "postgres", params = defaultParams) =>
      `postgres://${SUPERUSER}:${PASSWORD}@127.0.0.1:${port}/${database}${params ? `?${params}` : ""}`,
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The server's key and certificate in its data folder (the key must be its own, mode 0600), and the settings naming them. */
function tlsSettings(certificates: Certificates, cluster: string, account: Account | null): string[] {
  const key = join(cluster, "server.key");
  const cert = join(cluster, "server.crt");
  const ca = join(cluster, "ca.crt");
  copyFileSync(certificates.serverKey, key);
  copyFileSync(certificates.serverCert, cert);
  copyFileSync(certificates.ca, ca);
  chmodSync(key, 0o600);
  for (const path of [key, cert, ca]) if (account) chownSync(path, account.uid, account.gid);
  return ["-c", "ssl=on", "-c", `ssl_cert_file=${cert}`, "-c", `ssl_key_file=${key}`, "-c", `ssl_ca_file=${ca}`];
}

function writeOwned(path: string, text: string, account: Account | null): void {
  writeFileSync(path, text);
  if (account) chownSync(path, account.uid, account.gid);
}
