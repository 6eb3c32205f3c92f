/**
 * A copy of the project where a newcomer's clone would be: in a `mktemp -d`
 * folder (mode 700, so as root the embedded database runs as `postgres` with
 * its data relocated), its packages linked, not copied. `npm start` and the
 * operator's commands run in it as real processes, each in its own process
 * group; after each test every one started is killed, and after the file the
 * copy and its cluster's data are removed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll } from "vitest";
import { QSTASH_DEV_CREDENTIALS } from "../../src/config/qstash-dev";
import { isAlive } from "../../src/db/embedded/cluster-users";
import { poll } from "./poll";
import { request } from "./service";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A started process: what it printed, and the banner's URL and token once ready. */
export interface Running {
  child: ChildProcess;
  output(): string;
  url: string;
  token: string;
}

/** What a command printed, and its exit code. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** For tests that deliver to a receiver on this machine: the SSRF guard is on by default. */
export const ALLOW_LOCAL = { DISPATCH_ALLOW_PRIVATE_NETWORKS: "true" };

/** A POST to the running service's `path` with its token. */
export function publishTo(running: Running, path: string, init: RequestInit = {}) {
  return request(`${running.url}${path}`, { method: "POST", ...init, headers: { Authorization: `Bearer ${running.token}`, ...(init.headers as object) } });
}

/** The environment every process gets: PATH and HOME only, as a newcomer's shell would pass on. */
export const SHELL_ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };

/** Makes the copy before the file's tests and removes it after; the returned helpers run processes in it. */
export function useProjectCopy() {
  let project = "";
  const started = new Set<ChildProcess>();
  beforeAll(() => {
    project = join(mkdtempSync(join(tmpdir(), "dispatch-clone-")), "project");
    chmodSync(join(project, ".."), 0o700);
    for (const part of ["bin", "dist", "scripts", "sql", "src", "package.json"]) cpSync(join(ROOT, part), join(project, part), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"));
  });
  afterEach(async () => {
    for (const child of started) killGroup(child);
    await poll(() => [...started].every(gone), "every started process gone");
    started.clear();
  });
  afterAll(async () => {
    await poll(() => {
      const pid = serverPid();
      return pid === null || !isAlive(pid);
    }, "the embedded Postgres stopped");
    // Under root the data was relocated to /var/lib/dispatch/clusters: remove it with the project.
    const link = join(project, ".dispatch", "pg");
    if (existsSync(link)) rmSync(realpathSync(link), { recursive: true, force: true });
    rmSync(join(project, ".."), { recursive: true, force: true });
  });

  /** The pid of the embedded Postgres its postmaster.pid names, or null (none, or removed as it is read: a stopping server). */
  function serverPid(): number | null {
    try {
      return Number(readFileSync(join(project, ".dispatch", "pg", "postmaster.pid"), "utf8").split("\n")[0]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  /** Starts a process in the copy, in its own process group, tracked for cleanup; its output is collected. */
  function spawnIn(program: string, args: string[], env: Record<string, string>, options: { group?: boolean } = {}) {
    const child = spawn(program, args, { cwd: project, detached: options.group ?? true, env, stdio: ["ignore", "pipe", "pipe"] });
    started.add(child);
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
    return { child, output: () => output };
  }

  /**
   * Runs `npm start` (or `dispatch <args>`) and waits for the whole banner;
   * the token is `dispatch token`'s (the banner shows none to a pipe), or
   * the SDKs' development token in their dev mode.
   */
  async function start(args: string[] = [], env: Record<string, string> = {}): Promise<Running> {
    const [program, programArgs] = args.length === 0 ? ["npm", ["start", "--silent"]] : [process.execPath, ["bin/dispatch.js", ...args]];
    const full: Record<string, string> = { ...SHELL_ENV, PORT: "0", HOST: "127.0.0.1", DISPATCH_DELAY_SCALE: "0.1", ...env };
    const { child, output } = spawnIn(program, programArgs, full);
    await poll(() => output().includes("Dispatch is running") || child.exitCode !== null, "the banner", 40_000);
    if (!output().includes("Dispatch is running")) throw new Error(`not ready:\n${output()}`);
    const dev = full.DISPATCH_QSTASH_DEV === "true";
    await poll(() => (dev ? /QSTASH_DEV=true/.test(output()) : /Try it/.test(output()) && /-d '\{"hello":"world"\}'/.test(output())), "the whole banner");
    const token = dev ? QSTASH_DEV_CREDENTIALS.token : (await command(["token"])).stdout.trim().split("\n").at(-1)!;
    return { child, output, url: output().match(/URL:\s+(\S+)/)![1]!, token };
  }

  /** Runs an operator command in the copy to its end. */
  function command(args: string[], env: Record<string, string> = {}): Promise<Ran> {
    return run(process.execPath, ["bin/dispatch.js", ...args], env);
  }

  /** Runs `program` in the copy to its end, with `env` beside PATH and HOME. */
  function run(program: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
    return new Promise((resolve) => {
      const child = spawn(program, args, { cwd: project, env: { ...SHELL_ENV, ...env } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
      child.on("exit", (code) => resolve({ code, stdout, stderr }));
    });
  }

  return { dir: () => project, serverPid, spawnIn, start, command, run, stop, crash };
}

function gone(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGKILL to the whole process group, as the OOM killer or a terminal's kill -9 of a group does. */
export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/** SIGTERM to the group (what a supervisor sends), and waits until the process we started is gone. */
export async function stop(child: ChildProcess): Promise<void> {
  process.kill(-child.pid!, "SIGTERM");
  await poll(() => gone(child), "the process stopped");
}

/** Kills the group and waits until the process we started is gone. */
export async function crash(child: ChildProcess): Promise<void> {
  killGroup(child);
  await poll(() => gone(child), "the killed process gone");
}
