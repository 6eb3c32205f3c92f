/**
 * Scenario 2a's load for any service: publishes at a fixed offered rate
 * (open loop: send i is due at i / rate s, at most 512 in flight) to one
 * receiver URL on a fresh database, measured as every scenario is. The
 * paired 2a rounds (paired.ts) and the search for the rate at the latency
 * bound (latency-bound.ts) take it.
 */
import { startDispatch, startServiceProcess } from "./dispatch";
import { PEERS } from "./peers/peers";
import { startPipeline } from "./pipeline-scenarios";
import { type BenchContext, measure, type Measurement, MESSAGES, type Service, withService } from "./scenarios";

/** How each service starts on a database, and its message (job) table. */
const SERVICES: Record<Service, { start: (databaseUrl: string) => ReturnType<typeof startDispatch>; table: string }> = {
  dispatch: { start: (url) => startDispatch(url), table: MESSAGES },
  pipeline: { start: (url) => startPipeline(url), table: "pipeline.messages" },
  ...Object.fromEntries(PEERS.map((peer) => [peer.service, { start: (url: string) => startServiceProcess(url, ["--import", "tsx", peer.script]), table: peer.jobTable }])),
} as Record<Service, { start: (databaseUrl: string) => ReturnType<typeof startDispatch>; table: string }>;

/** `service` on a fresh database, publishing at `rate` per second for `durationMs` (the plan's window by default), as run `run`. */
export function measureAtRate(ctx: BenchContext, service: Service, rate: number, run: string, durationMs = ctx.plan.windowMs): Promise<Measurement> {
  const { start, table } = SERVICES[service];
  return withService(ctx, run, start, (process, databaseUrl) =>
    measure(ctx, process, {
      run,
      databaseUrl,
      messageTable: table,
      destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "open", rate, maxInFlight: 512 },
      durationMs,
      endpoints: 1,
      drainMs: ctx.plan.drainMs,
    }));
}
