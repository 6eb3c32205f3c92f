/**
 * Debian's PgBouncer in front of a private server, in transaction mode (what
 * Supabase's and Neon's pooled URLs and RDS Proxy are) or session mode, with
 * the pool size the test gives. Under root it runs as the `postgres` account
 * (PgBouncer refuses to run as root).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../src/db/embedded/cluster";
import { postgresAccount } from "../../../src/db/embedded/postgres-account";
import { tool } from "./machine";
import { SUPERUSER, type PrivateServer } from "./server";

/** A running PgBouncer. */
export interface Pooler {
  port: number;
  /** The URL of `database` through the pooler, as `role` (the server's superuser by default). */
  url(database: string, role?: { name: string; password: string }): string;
  stop(): Promise<void>;
}

/** Starts PgBouncer in `mode` with `poolSize` server connections per database and user; `users` may sign in. */
export async function startPgBouncer(
  server: PrivateServer,
  options: { mode: "transaction" | "session"; poolSize: number; users?: { name: string; password: string }[] },
): Promise<Pooler> {
  const dir = mkdtempSync(join(tmpdir(), "dispatch-pgbouncer-"));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const users = [{ name: SUPERUSER, password: "dispatch" }, ...(options.users ?? [])];
  writeFileSync(join(dir, "userlist.txt"), users.map((user) => `"${user.name}" "${user.password}"`).join("\n") + "\n");
  writeFileSync(join(dir, "pgbouncer.ini"), [
    "[databases]",
    `* = host=127.0.0.1 port=${server.port}`,
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = scram-sha-256",
    `auth_file = ${join(dir, "userlist.txt")}`,
    `pool_mode = ${options.mode}`,
    `default_pool_size = ${options.poolSize}`,
    "max_client_conn = 1000",
    "ignore_startup_parameters = extra_float_digits,options",
    `logfile = ${join(dir, "pgbouncer.log")}`,
    `pidfile = ${join(dir, "pgbouncer.pid")}`,
  ].join("\n") + "\n");
  for (const file of ["userlist.txt", "pgbouncer.ini"]) chmodSync(join(dir, file), 0o644);
  const account = process.getuid?.() === 0 ? await postgresAccount() : null;
  // It writes its log and pid file there.
  if (account) chownSync(dir, account.uid, account.gid);
  const child: ChildProcess = spawn(tool("pgbouncer", "pgbouncer"), [join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(account ? { uid: account.uid, gid: account.gid } : {}),
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await waitForPort(port, exited, () => `${output}${readLog(join(dir, "pgbouncer.log"))}`);
  return {
    port,
    url: (database, role = { name: SUPERUSER, password: "dispatch" }) =>
      `postgres://${role.name}:${role.password}@127.0.0.1:${port}/${database}?sslmode=disable`,
    async stop() {
      child.kill("SIGINT");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once something accepts connections on `port`; rejects if the process exits first. */
async function waitForPort(port: number, exited: Promise<void>, output: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (let attempt = 0; attempt < 100; attempt++) {
    if (gone) throw new Error(`pgbouncer exited:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port }, () => (socket.end(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port}:\n${output()}`);
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8").slice(-4000);
  } catch {
    return "";
  }
}
