/**
 * Scenario 2b's measurement for either service on a fresh database: the
 * maximum delivered rate at `concurrency` in flight. The paired rounds
 * (paired.ts) take it for Dispatch beside the pipeline, idle and under
 * contention.
 */
import { startPipeline } from "./pipeline-scenarios";
import { type BenchContext, measure, MESSAGES, type ScenarioResult, serviceResult, withDispatch, withService } from "./scenarios";

/** 2b's window as run `run`: `concurrency` publishes in flight to one receiver URL for the plan's window (2c and 2d measure it too). */
export function deliveredRateWindow(ctx: BenchContext, run: string) {
  const { plan } = ctx;
  return {
    run,
    destination: `${ctx.receiverUrl}/in/${run}/0`,
    pacing: { kind: "closed", concurrency: plan.concurrency } as const,
    durationMs: plan.windowMs,
    endpoints: 1,
    drainMs: plan.drainMs,
  };
}

/** Measures `service`'s 2b as run `run`; the result carries `id` and `title`. */
export function deliveredRate(ctx: BenchContext, service: "dispatch" | "pipeline", run: string, id: string, title: string): Promise<ScenarioResult> {
  const window = deliveredRateWindow(ctx, run);
  if (service === "dispatch") {
    return withDispatch(ctx, run, async (dispatch, databaseUrl) =>
      serviceResult("dispatch", false, id, title, dispatch, await measure(ctx, dispatch, { ...window, databaseUrl, messageTable: MESSAGES })));
  }
  return withService(ctx, run, startPipeline, async (pipeline, databaseUrl) =>
    serviceResult("pipeline", false, id, title, pipeline, await measure(ctx, pipeline, { ...window, databaseUrl, messageTable: "pipeline.messages" })));
}
