/**
 * Request/response over Node's IPC channel between the orchestrator and its
 * helper processes (receiver, load generator). A helper exits as soon as the
 * orchestrator goes away, so no helper outlives a crashed run.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

type Handlers = Record<string, (args: never) => unknown>;

interface Request {
  id: number;
  command: string;
  args: unknown;
}

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

/** A helper process the orchestrator talks to. */
export interface Helper {
  pid: number;
  /** Runs `command` in the helper; rejects if it fails or takes longer than `timeoutMs`. */
  call<T>(command: string, args: unknown, timeoutMs: number): Promise<T>;
  /** Kills the helper (SIGKILL) and waits until it is gone. */
  kill(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/**
 * Forks `file` (a module next to this one, run through tsx) and resolves once
 * it sends its `ready` message, which may carry data (e.g. the receiver's URL).
 */
export async function startHelper<Ready>(file: string, timeoutMs = 20_000): Promise<{ helper: Helper; ready: Ready }> {
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  live.add(child);
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => {
    live.delete(child);
    for (const waiter of pending.values()) waiter.reject(new Error(`${file} exited`));
    pending.clear();
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} not ready in ${timeoutMs} ms`)), timeoutMs);
    child.once("message", (message: { ready: Ready }) => (clearTimeout(timer), resolve(message.ready)));
    child.once("exit", (code) => (clearTimeout(timer), reject(new Error(`${file} exited (${code}) before it was ready`))));
  });
  child.on("message", (message: Reply) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`${file}: ${message.error}`));
    else waiter?.resolve(message.result);
  });
  let nextId = 0;
  const helper: Helper = {
    pid: child.pid!,
    call<T>(command: string, args: unknown, timeoutMs: number) {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${file} ${command}: no answer in ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (value) => (clearTimeout(timer), resolve(value as T)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        });
        child.send({ id, command, args } satisfies Request);
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  return { helper, ready };
}

/** In a helper: answers the orchestrator's calls with `handlers`, after announcing `ready`. */
export function serveHelper(handlers: Handlers, ready: unknown): void {
  if (!process.send) throw new Error("this module runs as a helper of bench/run.ts");
  process.on("disconnect", () => process.exit(0));
  process.on("message", async ({ id, command, args }: Request) => {
    const handler = handlers[command];
    try {
      if (!handler) throw new Error(`unknown command ${command}`);
      process.send!({ id, result: await handler(args as never) } satisfies Reply);
    } catch (error) {
      process.send!({ id, error: (error as Error).message } satisfies Reply);
    }
  });
  process.send({ ready });
}
