/**
 * Paired rounds: Dispatch and the pipeline measured back to back, idle and
 * then with one core busy with other work (contention.ts), `rounds` times, in
 * scenario 2b (the maximum delivered rate) or 2a (publish → arrival at the
 * plan's fixed offered rate, latency-at-rate.ts); the order swapped each round
 * (D P, P* D*; then P D, D* P*; ...: each service's idle and contended
 * measurements alternate between the ends and the middle of a round). This
 * host's speed drifts by up to 1.5x within minutes (bench/READING.md), so a
 * ratio of two measurements taken minutes apart carries that drift; a pair
 * taken seconds apart mostly does not. The report gives each round's ratios
 * and their medians.
 */
import { underContention } from "./contention";
import { deliveredRate } from "./delivered-rate";
import { measureAtRate } from "./latency-at-rate";
import type { BenchContext, Measurement } from "./scenarios";

/** Dispatch's and the pipeline's figures, measured one right after the other. */
export interface Pair {
  dispatch: Measurement;
  pipeline: Measurement;
}

/** One round: the idle pair, then the pair under contention. */
export interface PairedRound extends Pair {
  first: "dispatch" | "pipeline";
  contended: Pair;
}

type Service = "dispatch" | "pipeline";

/** Measures one service in a round; `label` says idle or contended, `round` counts from 0. */
type Measure = (service: Service, label: string, round: number) => Promise<Measurement>;

/** 2b in `rounds` paired rounds. */
export function pairedDelivered(ctx: BenchContext, rounds: number): Promise<PairedRound[]> {
  return pairedRounds(rounds, (service, label, round) =>
    deliveredRate(ctx, service, `${service === "dispatch" ? "s" : "p"}2b_${label.replaceAll("-", "_")}_${round}`, `2b-${label}-${round + 1}`, `paired 2b, ${label}`)
      .then((result) => result.measurement));
}

/** 2a (the plan's fixed offered rate) in `rounds` paired rounds. */
export function pairedAtRate(ctx: BenchContext, rounds: number): Promise<PairedRound[]> {
  return pairedRounds(rounds, (service, label, round) =>
    measureAtRate(ctx, service, ctx.plan.e2eRate, `${service === "dispatch" ? "s" : "p"}2a_${label.replaceAll("-", "_")}_${round}`));
}

async function pairedRounds(rounds: number, measured: Measure): Promise<PairedRound[]> {
  const results: PairedRound[] = [];
  for (let round = 0; round < rounds; round++) {
    const first: Service = round % 2 === 0 ? "dispatch" : "pipeline";
    const second: Service = first === "dispatch" ? "pipeline" : "dispatch";
    const idle = { [first]: await measured(first, "paired", round), [second]: await measured(second, "paired", round) } as Record<Service, Measurement>;
    const contended = await underContention(async () => {
      const later = await measured(second, "paired-contended", round);
      return { [second]: later, [first]: await measured(first, "paired-contended", round) } as Record<Service, Measurement>;
    });
    results.push({ first, dispatch: idle.dispatch, pipeline: idle.pipeline, contended: { dispatch: contended.dispatch, pipeline: contended.pipeline } });
  }
  return results;
}
