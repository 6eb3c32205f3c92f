/**
 * Throughput at a latency bound: the highest offered rate at which p99
 * publish → arrival stays within `LATENCY_BOUND_MS`, per service, found by
 * stepping scenario 2a's open-loop load (latency-at-rate.ts) on a fresh
 * database each step: doubling from `FIRST_RATE` until a step fails (or
 * halving from it, down to `MIN_RATE`, while it fails), then halving the gap
 * between the last rate that held and the first that did not, `BISECTIONS`
 * times. A step holds when every accepted publish arrived within the drain
 * allowance, none failed, p99 was within the bound, and the load generator
 * sent the planned publishes but for `SKIP_ALLOWANCE` of them (a send due in
 * the window's last milliseconds may miss it; more unsent means the service
 * did not answer fast enough to keep `maxInFlight` free). A saturated service that accepts faster than it delivers shows
 * its rate beside its latency, which is what this measures instead.
 */
import { measureAtRate } from "./latency-at-rate";
import type { BenchContext, Measurement, Service } from "./scenarios";

/** The bound on p99 publish → arrival, ms. */
export const LATENCY_BOUND_MS = 100;
const FIRST_RATE = 250;
const MIN_RATE = 30;
/** The share of the planned sends that may go unsent at the window's end. */
const SKIP_ALLOWANCE = 0.001;
const MAX_RATE = 32_000;
const BISECTIONS = 2;
/** Each step's publishing window, ms (the plan's warm-up comes first). */
const STEP_MS = { full: 5_000, quick: 2_000 };

/** One rate tried. */
export interface BoundStep {
  rate: number;
  held: boolean;
  measurement: Measurement;
}

/** A service's search: every step in the order taken, and the highest rate that held (null: not even the first). */
export interface BoundSearch {
  service: Service;
  steps: BoundStep[];
  rateAtBound: number | null;
}

/** Whether `m` stayed within the bound with nothing lost or failed, and (almost) every planned publish sent. */
export function heldBound(m: Measurement): boolean {
  const { delivery, publish } = m;
  const planned = publish.sent + publish.skipped;
  return delivery.drained && delivery.missing === 0 && publish.failed === 0 && publish.skipped <= Math.max(1, SKIP_ALLOWANCE * planned) &&
    (delivery.latency.p99 ?? Infinity) <= LATENCY_BOUND_MS;
}

/** Searches `service`'s rate at the bound; `log` hears each step. */
export async function rateAtBound(ctx: BenchContext, service: Service): Promise<BoundSearch> {
  const steps: BoundStep[] = [];
  const step = async (rate: number): Promise<boolean> => {
    const measurement = await measureAtRate(ctx, service, rate, `bound_${service.replace(/\W/g, "")}_${rate}`, STEP_MS[ctx.plan.quick ? "quick" : "full"]);
    const held = heldBound(measurement);
    steps.push({ rate, held, measurement });
    ctx.log(`  ${service} at ${rate}/s: p99 ${measurement.delivery.latency.p99 ?? "n/a"} ms, ` +
      `${measurement.delivery.inWindowPerSecond.toFixed(0)} delivered/s, ${measurement.publish.skipped} skipped: ${held ? "held" : "over"}`);
    return held;
  };
  let held: number | null = null;
  let over: number | null = null;
  for (let rate = FIRST_RATE; held === null && rate >= MIN_RATE; rate = Math.round(rate / 2)) {
    if (await step(rate)) held = rate;
    else over = rate;
  }
  if (held === null) return { service, steps, rateAtBound: null };
  for (let rate = held * 2; over === null && rate <= MAX_RATE; rate *= 2) {
    if (!(await step(rate))) {
      over = rate;
      break;
    }
    held = rate;
  }
  for (let i = 0; i < BISECTIONS && held !== null && over !== null; i++) {
    const middle = Math.round((held + over) / 2);
    if (await step(middle)) held = middle;
    else over = middle;
  }
  return { service, steps, rateAtBound: held };
}
