/**
 * Dispatch under test: `node bin/dispatch.js start --role <role>` as a child
 * process on a given database, with its memory watched from /proc. Any other
 * service that prints a `URL: <base>` banner (the minimal pipeline) runs the
 * same way through `startServiceProcess`. Several processes on one database
 * (an API and workers) are measured as one service through `processGroup`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Config, loadConfig } from "../src/config/config";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RSS_SAMPLE_MS = 100;

/** A running Dispatch process. */
export interface DispatchProcess {
  /** Base URL parsed from the banner ("" for a worker-only process, which serves no API). */
  url: string;
  token: string;
  pid: number;
  /** Every process of the service: `[pid]`, or a group's (bench/dispatch.ts `processGroup`). */
  pids: number[];
  /** Its configuration, parsed from the environment it was started with. */
  config: Config;
  /** How long it took from spawn to the banner, ms. */
  startupMs: number;
  /** Largest VmRSS sampled (every 100 ms) and the kernel's VmHWM since the last `resetPeak`, MiB. */
  peakRss(): { sampledMiB: number; hwmMiB: number };
  /** Starts a new peak window (clears the kernel's VmHWM through /proc/<pid>/clear_refs). */
  resetPeak(): void;
  /** Warnings and errors it logged (graphile-worker and the service), newest last, at most 20. */
  problems(): string[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL (a crash: nothing is finished or released); resolves once it is gone. */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => killAllDispatch());

/** SIGKILLs every Dispatch process still running (cleanup after a failure or a signal). */
export function killAllDispatch(): void {
  for (const child of running) child.kill("SIGKILL");
}

/** Dispatch's process roles. */
export type Role = "all" | "api" | "worker";

/** The banner line a service prints once ready (its base URL, when it serves an API, is the first group). */
const URL_BANNER = /URL:\s+(\S+)/;
const WORKER_BANNER = /Dispatch is running \(role: worker\b/;

/**
 * Starts Dispatch on `databaseUrl` with `role`. `DISPATCH_*` variables of the
 * bench's own environment pass through (e.g. `DISPATCH_WORKER_CONCURRENCY`),
 * except the ones the bench sets; a scenario's own `env` wins over both.
 */
export function startDispatch(databaseUrl: string, role: Role = "all", env: Record<string, string> = {}): Promise<DispatchProcess> {
  // A worker-only process serves no API: its banner has no URL line, so it is ready at the banner's first line.
  const ready = role === "worker" ? WORKER_BANNER : URL_BANNER;
  return startServiceProcess(databaseUrl, ["bin/dispatch.js", "start", "--role", role], ready, 60_000, env);
}

/**
 * Runs `node <args>` in the project folder with Dispatch's environment (the
 * database, a fresh token, port 0 on 127.0.0.1) and resolves once it printed
 * `ready` (by default `URL: <base>`).
 */
export async function startServiceProcess(
  databaseUrl: string,
  args: string[],
  ready = URL_BANNER,
  timeoutMs = 60_000,
  overrides: Record<string, string> = {},
): Promise<DispatchProcess> {
  const token = `bench_${randomBytes(16).toString("hex")}`;
  const passThrough = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("DISPATCH_")));
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    ...passThrough,
    DATABASE_URL: databaseUrl,
    DISPATCH_TOKEN: token,
    // As README "Security" asks of a deployment: stored secrets sealed (and no warning at start).
    DISPATCH_SECRET: "bench-secret-0123456789-0123456789-0123456789",
    DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
    PORT: "0",
    HOST: "127.0.0.1",
    ...overrides,
  };
  const config = loadConfig(env);
  const started = Date.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => running.delete(child));
  let stdout = "";
  let stderr = "";
  const problems: string[] = [];
  child.stdout!.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
    for (const line of chunk.toString().split("\n")) if (line.trim()) problems.push(line.trim().slice(0, 300));
    problems.splice(0, Math.max(0, problems.length - 20));
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} not ready in ${timeoutMs} ms:\n${stdout}${stderr}`)), timeoutMs);
    child.stdout!.on("data", () => {
      const match = ready.exec(stdout);
      if (match) (clearTimeout(timer), resolve(match[1] ?? ""));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited (${signal ?? code}) before it was ready:\n${stdout}${stderr}`));
    });
  }).catch(async (error: Error) => {
    child.kill("SIGKILL");
    await exited;
    throw error;
  });

  const pid = child.pid!;
  let sampledKiB = 0;
  const sample = () => {
    const rss = readStatus(pid).VmRSS;
    if (rss !== undefined) sampledKiB = Math.max(sampledKiB, rss);
  };
  sample();
  const sampler = setInterval(sample, RSS_SAMPLE_MS);
  return {
    url,
    token,
    pid,
    pids: [pid],
    config,
    startupMs: Date.now() - started,
    peakRss: () => {
      sample();
      return { sampledMiB: sampledKiB / 1024, hwmMiB: (readStatus(pid).VmHWM ?? 0) / 1024 };
    },
    resetPeak() {
      sampledKiB = 0;
      try {
        // "5" resets the peak resident set size (VmHWM) to the current RSS (proc(5)).
        writeFileSync(`/proc/${pid}/clear_refs`, "5");
      } catch {
        // Not permitted here: VmHWM then covers the process's whole life.
      }
      sample();
    },
    problems: () => [...problems],
    async stop(graceMs = 10_000) {
      clearInterval(sampler);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      clearInterval(sampler);
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * Processes on one database measured as one service. The first part (the one
 * serving the API) gives the URL, token and configuration; `pids` are all of
 * theirs, peak RSS is the largest of any one process, start-up the slowest
 * (they start together), and `stop` and `kill` reach every process. Logged
 * lines carry the part's name.
 */
export function processGroup(parts: { name: string; process: DispatchProcess }[]): DispatchProcess {
  const front = parts[0]!.process;
  const all = parts.map((part) => part.process);
  return {
    url: front.url,
    token: front.token,
    pid: front.pid,
    pids: all.flatMap((p) => p.pids),
    config: front.config,
    startupMs: Math.max(...all.map((p) => p.startupMs)),
    peakRss() {
      const each = all.map((p) => p.peakRss());
      return { sampledMiB: Math.max(...each.map((r) => r.sampledMiB)), hwmMiB: Math.max(...each.map((r) => r.hwmMiB)) };
    },
    resetPeak: () => all.forEach((p) => p.resetPeak()),
    problems: () => parts.flatMap(({ name, process }) => process.problems().map((line) => `${name}: ${line}`)).slice(-20),
    stop: async (graceMs) => void (await Promise.all(all.map((p) => p.stop(graceMs)))),
    kill: async () => void (await Promise.all(all.map((p) => p.kill()))),
  };
}

/** The KiB figures of /proc/<pid>/status (VmRSS, VmHWM, ...). */
function readStatus(pid: number): Record<string, number> {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    return Object.fromEntries([...text.matchAll(/^(Vm\w+):\s+(\d+) kB$/gm)].map((m) => [m[1]!, Number(m[2])]));
  } catch {
    return {};
  }
}
