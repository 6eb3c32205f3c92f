/**
 * Scenario 2b in paired rounds: Dispatch's and the pipeline's maximum
 * delivered rate measured back to back, `rounds` times, the order swapped
 * each round (D P, P D, D P). This host's speed drifts by up to 1.5x within
 * minutes (bench/READING.md), so a ratio of two measurements taken minutes
 * apart carries that drift; a pair taken seconds apart mostly does not. The
 * report gives each round's ratios and their median.
 */
import { deliveredRate } from "./delivered-rate";
import type { BenchContext, Measurement } from "./scenarios";

/** One round: Dispatch's and the pipeline's 2b, measured one right after the other. */
export interface PairedRound {
  first: "dispatch" | "pipeline";
  dispatch: Measurement;
  pipeline: Measurement;
}

export async function pairedDelivered(ctx: BenchContext, rounds: number): Promise<PairedRound[]> {
  const measured = async (service: "dispatch" | "pipeline", round: number) =>
    (await deliveredRate(ctx, service, `${service === "dispatch" ? "s" : "p"}2b_paired_${round}`, `2b-paired-${round}`, "paired 2b")).measurement;
  const results: PairedRound[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const dispatch = await measured("dispatch", round);
      results.push({ first: "dispatch", dispatch, pipeline: await measured("pipeline", round) });
    } else {
      const pipeline = await measured("pipeline", round);
      results.push({ first: "pipeline", dispatch: await measured("dispatch", round), pipeline });
    }
  }
  return results;
}
