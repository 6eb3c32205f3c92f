/**
 * Scenario 2b in paired rounds: Dispatch's and the pipeline's maximum
 * delivered rate measured back to back, `rounds` times, the order swapped
 * each round (D P, P D, D P). This host's speed drifts by up to 1.5x within
 * minutes (bench/READING.md), so a ratio of two measurements taken minutes
 * apart carries that drift; a pair taken seconds apart mostly does not. The
 * report gives each round's ratios and their median.
 */
import type { Pacing } from "./load";
import { startPipeline } from "./pipeline-scenarios";
import { type BenchContext, measure, MESSAGES, type Measurement, withDispatch, withService } from "./scenarios";

/** One round: Dispatch's and the pipeline's 2b, measured one right after the other. */
export interface PairedRound {
  first: "dispatch" | "pipeline";
  dispatch: Measurement;
  pipeline: Measurement;
}

export async function pairedDelivered(ctx: BenchContext, rounds: number): Promise<PairedRound[]> {
  const { plan } = ctx;
  const closed: Pacing = { kind: "closed", concurrency: plan.concurrency };
  const window = (run: string) => ({
    run, destination: `${ctx.receiverUrl}/in/${run}/0`, pacing: closed, durationMs: plan.windowMs, endpoints: 1, drainMs: plan.drainMs,
  });
  const dispatch = (round: number) =>
    withDispatch(ctx, `paired_${round}`, (service, databaseUrl) =>
      measure(ctx, service, { ...window(`s2b_paired_${round}`), databaseUrl, messageTable: MESSAGES }));
  const pipeline = (round: number) =>
    withService(ctx, `pipeline_paired_${round}`, startPipeline, (service, databaseUrl) =>
      measure(ctx, service, { ...window(`p2b_paired_${round}`), databaseUrl, messageTable: "pipeline.messages" }));
  const results: PairedRound[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const d = await dispatch(round);
      results.push({ first: "dispatch", dispatch: d, pipeline: await pipeline(round) });
    } else {
      const p = await pipeline(round);
      results.push({ first: "pipeline", dispatch: await dispatch(round), pipeline: p });
    }
  }
  return results;
}
