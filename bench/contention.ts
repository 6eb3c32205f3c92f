/**
 * Contention: a process outside the benchmark that spins one core at a
 * fixed duty cycle (busy for `CONTENTION_DUTY` of every 100 ms). The paired
 * rounds (paired.ts) measure Dispatch's and the pipeline's 2b with it running
 * as well as without: a process whose CPU per message grows under load gets
 * less efficient exactly when it is overloaded.
 */
import { type ChildProcess, spawn } from "node:child_process";

/** The share of one core the background process takes. */
export const CONTENTION_DUTY = 0.75;
const PERIOD_MS = 100;

/** Runs `body` with the spinner busy; it is killed afterwards, and dies with this run if the run dies. */
export async function underContention<T>(body: () => Promise<T>): Promise<T> {
  const spinner = startSpinner(CONTENTION_DUTY);
  try {
    return await body();
  } finally {
    spinner.kill("SIGKILL");
  }
}

/** A node process busy `duty × PERIOD_MS` of every `PERIOD_MS`, until killed or its parent (this run) is gone. */
function startSpinner(duty: number): ChildProcess {
  const program = `
    const parent = process.ppid;
    setInterval(() => {
      try { process.kill(parent, 0); } catch { process.exit(0); }
      const end = performance.now() + ${duty * PERIOD_MS};
      while (performance.now() < end);
    }, ${PERIOD_MS});`;
  const child = spawn(process.execPath, ["-e", program], { stdio: "ignore" });
  child.unref();
  return child;
}
