/**
 * Dispatch as a real child process: `node bin/dispatch.js start`, for tests
 * that need to kill a process outright (every spawned process is tracked so
 * `killAll()` can clean up even after a failed test), and the operator's
 * commands, run to their end (`runDispatch`), or in the test's own process
 * (`runDispatchHere`: the CLI's reading of its arguments and the command,
 * without a process start; test/commands.test.ts runs the binary).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { invoke } from "../../src/command-line";
import { createLog } from "../../src/observability/log";
import { noteLogLine } from "./no-internal-errors";
import { TEST_SECRET } from "./service";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/**
 * What every process gets unless `env` says otherwise: PATH, HOME, and the
 * secret test services seal their databases with (they share databases
 * with in-process services), and no throttle of failed authentication (every
 * test's client is 127.0.0.1; test/auth-throttle.test.ts tests it).
 */
const BASE_ENV = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DISPATCH_SECRET: TEST_SECRET, DISPATCH_AUTH_FAILURE_LIMIT: "0" };
const running = new Set<DispatchProcess>();

/** A started Dispatch process. */
export interface DispatchProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGKILLs the process (nothing graceful runs) and waits until it is gone. */
  kill(): Promise<void>;
  /** Sends SIGTERM and resolves with the exit code once the process has shut down. */
  terminate(): Promise<number | null>;
}

/**
 * Starts `dispatch start --role <role>` with exactly `env` (plus PATH/HOME)
 * and resolves once it prints its banner; rejects with its output if it
 * exits or is not ready within `timeoutMs`.
 */
export async function startDispatchProcess(
  role: "api" | "worker" | "all",
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<DispatchProcess> {
  const child = spawn(process.execPath, ["bin/dispatch.js", "start", "--role", role], {
    cwd: ROOT,
    env: { ...BASE_ENV, HOST: "127.0.0.1", PORT: "0", DISPATCH_CHECK_ANSWERS: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    for (const line of chunk.toString().split("\n")) noteLogLine(line);
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const handle: DispatchProcess = {
    child,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      running.delete(handle);
    },
    async terminate() {
      child.kill("SIGTERM");
      await exited;
      running.delete(handle);
      return child.exitCode;
    },
  };
  running.add(handle);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not ready in ${timeoutMs} ms:\n${output}`)), timeoutMs);
      const onData = () => {
        if (output.includes("Dispatch is running")) (clearTimeout(timer), resolve());
      };
      child.stdout!.on("data", onData);
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`exited (${signal ?? code}) before it was ready:\n${output}`));
      });
    });
  } catch (error) {
    await handle.kill();
    throw error;
  }
  return handle;
}

/** Kills every process started by `startDispatchProcess` that is still running. */
export async function killAllDispatchProcesses(): Promise<void> {
  await Promise.all([...running].map((handle) => handle.kill()));
}

/** What a command printed and its exit code. */
export interface CommandOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `dispatch <args>` with exactly `env` (plus PATH/HOME); resolves with its exit code and output. */
export function runDispatch(args: string[], env: Record<string, string>): Promise<CommandOutput> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bin/dispatch.js", ...args], {
      cwd: ROOT,
      env: { ...BASE_ENV, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs `dispatch <args>` in this process, on the database `env` names (never the embedded one, which would
 * run in the test's process), with what a process gets otherwise: its answer and exit code, and what it logged.
 */
export async function runDispatchHere(args: string[], env: Record<string, string> & { DATABASE_URL: string }): Promise<CommandOutput> {
  if (env.DATABASE_URL === "") throw new Error("runDispatchHere needs a DATABASE_URL: the embedded database would run in the test's process");
  let logged = "";
  const invocation = await invoke(args, { ...BASE_ENV, ...env }, (level) => createLog(level, false, { write: (line) => void (logged += line) }));
  if (!("answer" in invocation)) throw new Error(`dispatch ${args.join(" ")} starts the service: use startDispatchProcess`);
  const { code, output } = invocation.answer;
  return code === 0 ? { code, stdout: `${output}\n`, stderr: logged } : { code, stdout: "", stderr: `${logged}${output}\n` };
}
