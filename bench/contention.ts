/**
 * Scenario 2b under contention: the maximum delivered rate measured while a
 * process outside the benchmark spins one core at a fixed duty cycle (busy
 * for `duty` of every 100 ms), for Dispatch and the minimal pipeline alike.
 * Set beside 2b, it shows whether the cost per message holds when the machine
 * is busy: a process whose CPU per message grows under load gets less
 * efficient exactly when it is overloaded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { deliveredRate } from "./delivered-rate";
import type { BenchContext, ScenarioResult } from "./scenarios";

/** The share of one core the background process takes. */
export const CONTENTION_DUTY = 0.75;
const PERIOD_MS = 100;

/** Dispatch's and the pipeline's 2b, each with the spinner running. */
export async function deliveredUnderContention(ctx: BenchContext): Promise<ScenarioResult[]> {
  const title = (who: string) => `${who}maximum delivered rate, one core ${Math.round(CONTENTION_DUTY * 100)} % busy with other work`;
  const spinner = startSpinner(CONTENTION_DUTY);
  try {
    return [
      await deliveredRate(ctx, "dispatch", "s2b_contended", "2b-delivered-contended", title("")),
      await deliveredRate(ctx, "pipeline", "p2b_contended", "pipeline-2b-delivered-contended", title("Minimal pipeline: ")),
    ];
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
