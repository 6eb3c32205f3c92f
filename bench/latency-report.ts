/**
 * Latency in the report (issue 39): scenario 2a in paired rounds, idle and
 * beside a core busy with other work, for Dispatch and the pipeline; and the
 * rate each service sustains with p99 publish → arrival within the bound
 * (latency-bound.ts). Their tables and targets: Dispatch's contended p99 at
 * most twice the pipeline's contended p99, its contended CPU per delivery at
 * most 1.3× its idle figure; its rate at the bound at least 1.2× the
 * pipeline's and twice each peer's.
 */
import { CONTENTION_DUTY } from "./contention";
import { type BoundSearch, LATENCY_BOUND_MS } from "./latency-bound";
import type { PairedRound } from "./paired";
import type { BenchRun, TargetCheck } from "./report";
import { cpuOf, deliveryFaults, int, median, micros, ms, ratio, rateOf, table, times } from "./report-format";
import type { Measurement } from "./scenarios";

const p99 = (m: Measurement) => m.delivery.latency.p99 ?? Infinity;
const shown = (n: number) => (Number.isFinite(n) ? ms(n) : "n/a");

/** The medians over the rounds of what `contended` and idle measurements give. */
function medians(rounds: PairedRound[]) {
  const of = (pick: (r: PairedRound) => number) => median(rounds.map(pick));
  return {
    p99: { dispatch: of((r) => p99(r.dispatch)), pipeline: of((r) => p99(r.pipeline)) },
    contendedP99: { dispatch: of((r) => p99(r.contended.dispatch)), pipeline: of((r) => p99(r.contended.pipeline)) },
    ownCpu: { dispatch: of((r) => ratio(cpuOf(r.contended.dispatch), cpuOf(r.dispatch))), pipeline: of((r) => ratio(cpuOf(r.contended.pipeline), cpuOf(r.pipeline))) },
  };
}

/** The targets of the paired 2a rounds and of the search for the rate at the bound, for what the run measured. */
export function latencyTargets(run: BenchRun): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const rounds = run.pairedAtRate ?? [];
  if (rounds.length > 0) {
    const m = medians(rounds);
    checks.push(
      {
        target: `2a at ${int(run.plan.e2eRate)}/s beside a core ${Math.round(CONTENTION_DUTY * 100)} % busy: Dispatch's p99 ≤ 2× the pipeline's (medians of the paired rounds)`,
        measured: `${times(ratio(m.contendedP99.dispatch, m.contendedP99.pipeline))} (${shown(m.contendedP99.dispatch)} vs ${shown(m.contendedP99.pipeline)})`,
        met: m.contendedP99.dispatch <= 2 * m.contendedP99.pipeline,
      },
      {
        target: "2a beside a busy core: Dispatch's CPU per delivered message ≤ 1.3× its idle figure (median of the paired rounds)",
        measured: `${times(m.ownCpu.dispatch)} (the pipeline's ${times(m.ownCpu.pipeline)})`,
        met: m.ownCpu.dispatch <= 1.3,
      },
    );
  }
  const bound = run.bound ?? [];
  const dispatch = bound.find((s) => s.service === "dispatch");
  if (dispatch) {
    checks.push({
      target: `Dispatch sustains ${int(run.plan.e2eRate)}/s offered (2a's rate) with p99 publish → arrival ≤ ${LATENCY_BOUND_MS} ms: its rate at the bound is at least that`,
      measured: dispatch.rateAtBound === null ? "none held" : `${int(dispatch.rateAtBound)}/s`,
      met: (dispatch.rateAtBound ?? 0) >= run.plan.e2eRate,
    });
  }
  for (const other of bound.filter((s) => s.service !== "dispatch")) {
    if (!dispatch) break;
    const factor = other.service === "pipeline" ? 1.2 : 2;
    const [own, theirs] = [dispatch.rateAtBound ?? 0, other.rateAtBound ?? 0];
    checks.push({
      target: `rate with p99 publish → arrival ≤ ${LATENCY_BOUND_MS} ms: Dispatch ≥ ${factor}× ${other.service === "pipeline" ? "the pipeline" : other.service}'s`,
      measured: `${theirs > 0 ? times(own / theirs) : "n/a"} (${int(own)}/s vs ${int(theirs)}/s)`,
      met: theirs > 0 ? own >= factor * theirs : own > 0,
    });
  }
  return checks;
}

/** Dispatch's measurements in these parts, by id, for the exactly-once check. */
export function latencyMeasurements(run: BenchRun): { id: string; measurement: Measurement }[] {
  const rounds = (run.pairedAtRate ?? []).flatMap((r, i) => [
    { id: `2a-paired-${i + 1}`, measurement: r.dispatch },
    { id: `2a-paired-contended-${i + 1}`, measurement: r.contended.dispatch },
  ]);
  const steps = (run.bound ?? []).filter((s) => s.service === "dispatch").flatMap((s) => s.steps.map((step) => ({ id: `bound-${step.rate}`, measurement: step.measurement })));
  return [...rounds, ...steps];
}

/** Faults of exactly-once delivery among every service's bound steps (a peer that loses messages must not look fast). */
export function boundFaults(run: BenchRun): string[] {
  return (run.bound ?? []).flatMap((s) => s.steps.flatMap((step) => deliveryFaults(`${s.service} at ${step.rate}/s`, step.measurement)));
}

/** The section: the paired 2a rounds and the rates at the bound, for the parts that ran. */
export function latencySection(run: BenchRun): string[] {
  const rounds = run.pairedAtRate ?? [];
  const bound = run.bound ?? [];
  if (rounds.length === 0 && bound.length === 0) return [];
  return [
    `## Latency: 2a paired, and the rate at a p99 bound`,
    ``,
    ...(rounds.length > 0 ? pairedRows(run, rounds) : []),
    ...(bound.length > 0 ? boundRows(bound) : []),
  ];
}

function pairedRows(run: BenchRun, rounds: PairedRound[]): string[] {
  const row = (label: string, pick: (r: PairedRound) => { dispatch: Measurement; pipeline: Measurement }) =>
    rounds.map((r, i) => {
      const { dispatch, pipeline } = pick(r);
      return [`${i + 1} ${label} (${r.first} first)`, shown(p99(dispatch)), shown(p99(pipeline)), times(ratio(p99(dispatch), p99(pipeline))),
        micros(cpuOf(dispatch)), micros(cpuOf(pipeline)), `${int(rateOf(dispatch))}/s`, `${int(rateOf(pipeline))}/s`];
    });
  return [
    `Scenario 2a (${int(run.plan.e2eRate)}/s offered) for Dispatch and the pipeline back to back, the order swapped each round, ` +
      `idle and then beside a process spinning one core at ${Math.round(CONTENTION_DUTY * 100)} % duty (bench/paired.ts):`,
    ``,
    table(["Round", "Dispatch p99", "Pipeline p99", "ratio", "Dispatch CPU + Postgres per delivery", "Pipeline's", "Dispatch delivered", "Pipeline delivered"],
      [...row("idle", (r) => r), ...row("contended", (r) => r.contended)]),
    ``,
  ];
}

function boundRows(bound: BoundSearch[]): string[] {
  const at = (s: BoundSearch) => s.steps.find((step) => step.rate === s.rateAtBound);
  return [
    `The highest offered rate with p99 publish → arrival ≤ ${LATENCY_BOUND_MS} ms, nothing lost, failed or left unsent, found by stepping ` +
      `2a's open-loop load on a fresh database per step (bench/latency-bound.ts):`,
    ``,
    table(["Service", "Rate at the bound", "p99 there", "CPU + Postgres per delivery there", "Steps (rate: p99)"], bound.map((s) => [
      s.service,
      s.rateAtBound === null ? "none" : `${int(s.rateAtBound)}/s`,
      at(s) ? shown(p99(at(s)!.measurement)) : "n/a",
      at(s) ? micros(cpuOf(at(s)!.measurement)) : "n/a",
      s.steps.map((step) => `${int(step.rate)}: ${shown(p99(step.measurement))}${step.held ? "" : " ✗"}`).join(", "),
    ])),
    ``,
  ];
}
