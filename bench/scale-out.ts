/**
 * Scenario 2c, scale-out: scenario 2b's load (publishing as fast as possible)
 * against one API process (`dispatch start --role api`) and two worker
 * processes (`--role worker`) on one fresh database, measured as one service:
 * CPU and costs summed over the three processes, peak RSS of the largest.
 */
import { deliveredRateWindow } from "./delivered-rate";
import { type DispatchProcess, processGroup, type Role, startDispatch } from "./dispatch";
import { type BenchContext, MESSAGES, measure, type ScenarioResult, serviceResult, withService } from "./scenarios";

/** Worker processes beside the API process. */
const WORKERS = 2;

/** Runs scenario 2c on a fresh database (dropped afterwards). */
export function scaleOut(ctx: BenchContext): Promise<ScenarioResult> {
  return withService(ctx, "scaleout", startScaleOut, async (service, databaseUrl) => {
    const run = "s2c";
    const m = await measure(ctx, service, { ...deliveredRateWindow(ctx, run), databaseUrl, messageTable: MESSAGES });
    return serviceResult("dispatch", false, "2c-scale-out", `Delivered rate, 1 API + ${WORKERS} worker processes`, service, m);
  });
}

/**
 * Starts the API process and the worker processes on `databaseUrl` together
 * (migrations are safe to run concurrently); if one fails to start, the
 * others are stopped.
 */
async function startScaleOut(databaseUrl: string): Promise<DispatchProcess> {
  const parts: { name: string; role: Role }[] = [
    { name: "api", role: "api" },
    ...Array.from({ length: WORKERS }, (_, i) => ({ name: `worker ${i + 1}`, role: "worker" as const })),
  ];
  const started = await Promise.allSettled(parts.map((part) => startDispatch(databaseUrl, part.role)));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) {
    await Promise.all(started.map((s) => (s.status === "fulfilled" ? s.value.stop() : undefined)));
    throw failed.reason;
  }
  return processGroup(started.map((s, i) => ({ name: parts[i]!.name, process: (s as PromiseFulfilledResult<DispatchProcess>).value })));
}
