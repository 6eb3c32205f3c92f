/**
 * Turns a run into tables (printed, and written to bench/RESULTS.md) and a
 * JSON document (bench/results/<timestamp>.json and latest.json), with every
 * target marked MET or MISSED. A run of some parts only (`--only`) gets the
 * tables of what it measured and the targets those alone decide, in its own
 * JSON document; RESULTS.md and latest.json keep the last full run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import type { BacklogSeed } from "./backlog";
import type { Baselines } from "./baselines";
import { CONTENTION_DUTY } from "./contention";
import type { Costs } from "./costs";
import type { CpuUse } from "./cpu";
import type { CrashRecovery } from "./crash-recovery";
import type { FlowControlResult } from "./flow-control";
import type { LargeMessages } from "./large-messages";
import type { NodeCosts } from "./citus";
import type { FairnessRun } from "./fairness";
import { NOISY_ALONE_ID, NOISY_ID, type NoisyNeighbourRun } from "./noisy-neighbour";
import type { PairedRound } from "./paired";
import { COST_FIGURES, cpuOf, cpuPerDelivery, deliveryFaults, find, int, median, micros, ms, num, pct, rateOf, ratio, seconds, share, table, times } from "./report-format";
import type { RetentionRun } from "./retention";
import { PEERS } from "./peers/peers";
import { peerTargets, peersSection } from "./peers/report";
import type { BoundSearch } from "./latency-bound";
import { boundFaults, latencyMeasurements, latencySection, latencyTargets } from "./latency-report";
import { type Measurement, MESSAGES, type Plan, type ScenarioResult, type Service } from "./scenarios";
import type { ScheduleResult } from "./schedules";

/** Everything a run measured; a part `--only` left out is missing. */
export interface BenchRun {
  command: string;
  /** The parts run (`--only`), or null for a full run. */
  only: string[] | null;
  startedAt: string;
  durationMs: number;
  plan: Plan;
  postgres: { version: string; embedded: boolean; settings: Record<string, string> };
  /** os.loadavg() when the run started and ended: other work on the machine skews every figure. */
  loadAverage: { start: number[]; end: number[] };
  baselines?: Baselines;
  scenarios: ScenarioResult[];
  backlog?: BacklogSeed;
  crash?: CrashRecovery;
  large?: LargeMessages;
  flowControl?: FlowControlResult;
  schedules?: ScheduleResult;
  /** 2b for Dispatch and the pipeline in back-to-back pairs (bench/paired.ts). */
  paired: PairedRound[];
  /** 2a (the plan's rate) for Dispatch and the pipeline in back-to-back pairs. */
  pairedAtRate?: PairedRound[];
  /** Each service's highest rate within the p99 bound (bench/latency-bound.ts). */
  bound?: BoundSearch[];
  /** Scenario 10 without its 1/2b results, which are among `scenarios`. */
  retention?: Omit<RetentionRun, "results"> & { results?: undefined };
  /** Scenario 2d's hanging destination; its two measurements are among `scenarios`. */
  noisy?: NoisyNeighbourRun;
  /** Scenario 2f: another project's new messages beside one project's backlog. */
  fairness?: FairnessRun;
  /** Scenario 2h: the Citus cluster's costs by node (its two measurements are among `scenarios`). */
  citus?: { nodes: NodeCosts[] };
}

/** The sections of a run that a run of some parts may lack. */
const SECTIONS = ["baselines", "backlog", "crash", "large", "flowControl", "schedules", "retention", "noisy"] as const;

/** A run of every part. */
type FullRun = BenchRun & Required<Pick<BenchRun, (typeof SECTIONS)[number]>>;

function isFull(run: BenchRun): run is FullRun {
  return run.only === null && SECTIONS.every((section) => run[section] !== undefined);
}

/** A target and whether the run met it. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

const BENCH = fileURLToPath(new URL(".", import.meta.url));
const MIB_TO_MB = 1_048_576 / 1_000_000;

const serviceKind = (s: ScenarioResult) => (s.service === "dispatch" ? "Dispatch" : s.service);
/** The table whose HOT share a service's scenarios report. */
const messageTable = (service: Service) =>
  service === "dispatch" ? MESSAGES : service === "pipeline" ? "pipeline.messages" : PEERS.find((p) => p.service === service)!.jobTable;
const serviceName = (s: ScenarioResult) => `${serviceKind(s)}${s.processes > 1 ? ` (${s.processes} processes)` : ""}`;
const rssMB = (s: ScenarioResult) => Math.max(s.measurement.rss.sampledMiB, s.measurement.rss.hwmMiB) * MIB_TO_MB;

const cpuText = (c: CpuUse) =>
  `${c.machineCores.toFixed(2)} / ${c.focusCores === null ? "-" : c.focusCores.toFixed(2)} / ${c.benchCores.toFixed(2)} / ${c.otherCores.toFixed(2)} of ${cpus().length}`;

/** A warning when other work on the machine took a noticeable share of the CPU during measurements. */
function interference(run: BenchRun): string | null {
  const worst = Math.max(
    run.baselines?.cpu?.otherCores ?? 0,
    run.crash?.cpu.otherCores ?? 0,
    ...run.scenarios.map((s) => s.measurement.cpu.otherCores),
  );
  if (worst < 0.25) return null;
  return `- **Other work on the machine used up to ${worst.toFixed(2)} cores during measurements** (see the CPU rows): every figure is lower than this machine gives an idle benchmark.`;
}

function baselineTable(b: Baselines): string {
  return table(["Baseline (same server, scratch database)", "per second"], [
    ["Plain single-row INSERT commits, 16 clients, 1 KiB text", int(b.insertCommits)],
    ["Same INSERT with pg_notify in the transaction", int(b.insertNotifyCommits)],
    ["graphile_worker.add_job, one per transaction, 16 clients", int(b.addJob)],
    ["graphile_worker.add_jobs, 100 jobs per call (jobs), 16 clients", int(b.addJobsBatched)],
    ["graphile-worker no-op jobs worked, defaults (concurrency 1, no local queue)", int(b.workedDefaults)],
    [
      `no-op jobs worked, concurrency 1, localQueue 500 + completeJobBatchDelay 5${b.batchedPresetApplied ? "" : " (NOT applied)"}`,
      int(b.workedBatched),
    ],
    [`undici POSTs to the receiver, 64 in flight (p50/p99 ${ms(b.rawPostLatency.p50)}/${ms(b.rawPostLatency.p99)})`, int(b.rawPosts)],
  ]) + (b.cpu ? `\n\nCPU over the baselines, cores: machine / bench incl. Postgres / other work: ${b.cpu.machineCores.toFixed(2)} / ${b.cpu.benchCores.toFixed(2)} / ${b.cpu.otherCores.toFixed(2)} of ${cpus().length}.` : "");
}

/** The figures of one scenario, with the ratios that give them meaning. */
function scenarioTable(run: BenchRun, s: ScenarioResult): string {
  const { publish } = s.measurement;
  const rows: string[][] = [
    ["publishes sent / accepted (2xx) / failed", `${int(publish.sent)} / ${int(publish.accepted)} / ${int(publish.failed)}`],
    ["accepted publishes/s", int(publish.perSecond)],
    ["publish request latency p50 / p99", pct(publish.latency)],
  ];
  if (publish.skipped > 0 || publish.maxLagMs > 50) {
    rows.push(["offered rate not sustained: sends skipped / worst lag", `${int(publish.skipped)} / ${ms(publish.maxLagMs)}`]);
  }
  if (!s.publishOnly) rows.push(...deliveryRows(run, s));
  const cpu = s.measurement.cpu;
  rows.push([`CPU while publishing, cores: machine / ${serviceName(s)} / bench incl. Postgres / other work`, cpuText(cpu)]);
  const rss = s.measurement.rss;
  rows.push([
    `peak RSS of ${s.processes > 1 ? `the largest of the ${s.processes} ${serviceKind(s)} processes` : serviceKind(s)} (sampled VmRSS / VmHWM)`,
    `${(rss.sampledMiB * MIB_TO_MB).toFixed(0)} MB / ${(rss.hwmMiB * MIB_TO_MB).toFixed(0)} MB`,
  ]);
  rows.push(...costRows(s.measurement.costs, serviceName(s), messageTable(s.service)));
  const notes = [...s.notes, ...s.dispatchLog.slice(-3).map((line) => `${serviceName(s)} logged: ${line}`)];
  return `### ${s.id}: ${s.title}\n\n${table(["Figure", "Value"], rows)}${notes.length ? `\n\n${notes.map((n) => `- ${n}`).join("\n")}` : ""}`;
}

/** What a scenario cost per message (bench/costs.ts). */
function costRows(c: Costs, service: string, messageTable: string): string[][] {
  const per = `per ${c.unit} (${int(c.messages)} ${c.unit === "delivery" ? "delivered" : "accepted"}, warm-up to stop)`;
  return [
    [`CPU µs ${per}: ${service} / Postgres`, `${int(c.serviceMicros)} / ${c.postgresMicros === null ? "n/a" : int(c.postgresMicros)}`],
    [`rows written ${per}`, num(c.rowsWritten)],
    [`WAL bytes / records ${per}`, `${int(c.walBytes)} / ${num(c.walRecords, 1)}`],
    [`statements / commits ${per}`, `${c.statements === null ? "n/a (no pg_stat_statements)" : num(c.statements)} / ${num(c.commits)}`],
    [`HOT share of ${messageTable} updates`, share(c.hotRatio)],
    ...(c.serviceIo ? [[`${service} system calls ${per}: reads / writes (bytes)`,
      `${num(c.serviceIo.reads)} (${int(c.serviceIo.readBytes)} B) / ${num(c.serviceIo.writes)} (${int(c.serviceIo.writtenBytes)} B)`]] : []),
  ];
}

/** Exactly-once accounting, rates and latency of a scenario's deliveries, with the ratios that give them meaning. */
function deliveryRows(run: BenchRun, s: ScenarioResult): string[][] {
  const { publish, delivery } = s.measurement;
  const b = run.baselines;
  const rows: string[][] = [];
  rows.push(
    ["deliveries expected / distinct arrived", `${int(delivery.expected)} / ${int(delivery.distinct)}`],
    ["missing / duplicates / unexpected", `${int(delivery.missing)} / ${int(delivery.duplicates)} / ${int(delivery.unexpected)}`],
    ["distinct svc-message-id", int(delivery.distinctMessageIds)],
    ["delivered/s while publishing", int(delivery.inWindowPerSecond)],
    ["delivered/s, first publish to last arrival", int(delivery.overallPerSecond)],
    ["drain time after publishing stopped", delivery.drained ? ms(delivery.drainMs) : `not drained within ${ms(delivery.drainAllowanceMs)}`],
    ["publish → arrival p50 / p99", pct(delivery.latency)],
  );
  if (delivery.lateness.count > 0) rows.push(["lateness vs send time + delay p50 / p99", pct(delivery.lateness)]);
  if (b && s.id.startsWith("1-")) {
    rows.push(
      ["publish/s ÷ INSERT commits/s", times(ratio(publish.perSecond, b.insertCommits))],
      ["publish/s ÷ INSERT+NOTIFY commits/s", times(ratio(publish.perSecond, b.insertNotifyCommits))],
      ["publish/s ÷ add_job/s", times(ratio(publish.perSecond, b.addJob))],
    );
  }
  if (b && (s.id.startsWith("2b") || s.id.startsWith("2c") || s.id.startsWith("3"))) {
    rows.push(
      ["delivered/s ÷ raw undici POSTs/s", times(ratio(delivery.inWindowPerSecond, b.rawPosts))],
      ["delivered/s ÷ no-op jobs worked/s (batched)", times(ratio(delivery.inWindowPerSecond, b.workedBatched))],
    );
  }
  const one = s.id.startsWith("2c") ? find(run, "2b-delivered") : undefined;
  if (one) {
    const [cpu, oneCpu] = [cpuPerDelivery(s), cpuPerDelivery(one)];
    rows.push(
      ["delivered/s ÷ one process's delivered/s (2b)", times(ratio(delivery.inWindowPerSecond, one.measurement.delivery.inWindowPerSecond))],
      ["CPU µs per delivery, Dispatch + Postgres ÷ one process's (2b)", cpu !== null && oneCpu ? times(cpu / oneCpu) : "n/a"],
    );
  }
  const empty = s.id.endsWith("-backlog") ? find(run, s.id.replace(/-backlog$/, "")) : undefined;
  if (empty && s.id.startsWith("1-")) rows.push(["publish/s ÷ empty-table publish/s", times(ratio(publish.perSecond, empty.measurement.publish.perSecond))]);
  if (empty && s.id.startsWith("2b")) {
    rows.push(["delivered/s ÷ empty-table delivered/s", times(ratio(delivery.inWindowPerSecond, empty.measurement.delivery.inWindowPerSecond))]);
  }
  return rows;
}

/** Every target, checked against the run; a run of some parts (`--only`) gets the targets those parts alone decide. */
export function checkTargets(run: BenchRun): TargetCheck[] {
  if (isFull(run)) return [...fullRunTargets(run), ...noisyTargets(run), ...fairnessTargets(run), ...peerTargets(run), ...latencyTargets(run)];
  return [
    ...(run.scenarios.length > 0 ? [rssTarget(run)] : []),
    ...(run.scenarios.length > 0 || run.paired.length > 0 || latencyMeasurements(run).length > 0 || (run.bound ?? []).length > 0 ? [exactlyOnceTarget(run)] : []),
    ...(run.crash ? [crashTarget(run.crash)] : []),
    ...(run.flowControl ? flowControlTargets(run.flowControl) : []),
    ...(run.schedules ? [scheduleTarget(run.schedules)] : []),
    ...noisyTargets(run),
    ...fairnessTargets(run),
    ...peerTargets(run),
    ...latencyTargets(run),
  ];
}

/** Scenario 2f's target (issue 37): another project's new messages arrive within the bound beside one project's backlog. */
function fairnessTargets(run: BenchRun): TargetCheck[] {
  const f = run.fairness;
  if (!f) return [];
  const max = f.arrived === f.fresh ? f.latency.max : null;
  return [{
    target: `fairness (2f): another project's ${f.fresh} new messages arrive within ${f.boundMs} ms beside one project's ${int(f.backlog)}-message backlog`,
    measured: `${f.arrived}/${f.fresh} arrived, p50 ${ms(f.latency.p50)}, max ${ms(f.latency.max)}; ${int(f.waitingAtPublish)} of the backlog waiting at their publish, ${int(f.waitingAtEnd)} after`,
    met: max !== null && max <= f.boundMs,
  }];
}

/** The targets of a run of every part: the scenarios' own, then Dispatch against the pipeline. */
function fullRunTargets(run: FullRun): TargetCheck[] {
  const b = run.baselines;
  const publish = find(run, "1-publish")?.measurement;
  const delivered = find(run, "2b-delivered")?.measurement;
  const e2e = find(run, "2a-e2e")?.measurement;
  const delay = find(run, "4-delay")?.measurement;
  const publishBacklog = find(run, "1-publish-backlog")?.measurement;
  const deliveredBacklog = find(run, "2b-delivered-backlog")?.measurement;
  const publishRate = publish?.publish.perSecond ?? 0;
  const deliveredRate = delivered?.delivery.inWindowPerSecond ?? 0;
  const complete = (m: typeof e2e) => !!m && m.delivery.drained && m.delivery.missing === 0;
  const checks: TargetCheck[] = [
    { target: "publish ≥ 50 % of plain INSERT commits/s", measured: times(ratio(publishRate, b.insertCommits)), met: publishRate >= 0.5 * b.insertCommits },
    {
      target: `2a: every publish at ${int(run.plan.e2eRate)}/s offered delivered (its p99 is judged by the rate at the bound below)`,
      measured: e2e ? `${complete(e2e) ? "all delivered" : `${int(e2e.delivery.missing)} missing`}, p99 ${ms(e2e.delivery.latency.p99)}, ${int(e2e.publish.skipped)} left unsent by the load generator` : "n/a",
      met: complete(e2e),
    },
    {
      target: "delay p99 lateness < 250 ms (all delivered)",
      measured: delay ? `${ms(delay.delivery.lateness.p99)}${complete(delay) ? "" : `, ${int(delay.delivery.missing)} missing`}` : "n/a",
      met: complete(delay) && (delay!.delivery.lateness.p99 ?? Infinity) < 250,
    },
  ];
  const backlogPublish = ratio(publishBacklog?.publish.perSecond ?? 0, publishRate);
  const backlogDelivered = ratio(deliveredBacklog?.delivery.inWindowPerSecond ?? 0, deliveredRate);
  checks.push(
    { target: `backlog (${int(run.plan.backlogRows)} future rows): publish ≥ 80 % of empty`, measured: times(backlogPublish), met: backlogPublish >= 0.8 },
    { target: `backlog (${int(run.plan.backlogRows)} future rows): delivered ≥ 80 % of empty`, measured: times(backlogDelivered), met: backlogDelivered >= 0.8 },
  );
  checks.push(rssTarget(run), crashTarget(run.crash));
  const retentionPublish = ratio(find(run, "1-publish-retention")?.measurement.publish.perSecond ?? 0, publishRate);
  const retentionDelivered = ratio(find(run, "2b-delivered-retention")?.measurement.delivery.inWindowPerSecond ?? 0, deliveredRate);
  checks.push(
    {
      target: `retention: publish ≥ 90 % of empty while ${int(run.retention.rows)} expired messages are removed`,
      measured: times(retentionPublish),
      met: retentionPublish >= 0.9,
    },
    {
      target: `retention: delivered ≥ 90 % of empty while ${int(run.retention.rows)} expired messages are removed`,
      measured: `${times(retentionDelivered)}${run.retention.complete ? "" : ", NOT all removed"}`,
      met: retentionDelivered >= 0.9 && run.retention.complete,
    },
    {
      target: `retention: table size returns to a steady state (cycles of ${int(run.retention.rows)} rows stored and removed: last peak ≤ the one before + 2 %)`,
      measured: `${regrowth(run.retention) >= 0 ? "+" : ""}${(regrowth(run.retention) * 100).toFixed(1)} %`,
      met: regrowth(run.retention) <= 0.02,
    },
  );
  checks.push(...flowControlTargets(run.flowControl), scheduleTarget(run.schedules), exactlyOnceTarget(run));
  return [...checks, ...pipelineTargets(run)];
}

/** Peak RSS of every Dispatch scenario. */
function rssTarget(run: BenchRun): TargetCheck {
  const peak = Math.max(0, ...run.scenarios.filter((s) => s.service === "dispatch").map(rssMB));
  return { target: "peak RSS of Dispatch < 300 MB (every scenario)", measured: `${peak.toFixed(0)} MB`, met: peak < 300 };
}

/** Every Dispatch scenario that delivers, and every paired round, delivered each accepted publish once. */
function exactlyOnceTarget(run: BenchRun): TargetCheck {
  const pairedRuns = run.paired.flatMap((r, i) => [
    { id: `2b-paired-${i + 1}`, measurement: r.dispatch },
    { id: `2b-paired-contended-${i + 1}`, measurement: r.contended.dispatch },
  ]);
  const delivering = run.scenarios.filter((s) => s.service === "dispatch" && !s.publishOnly);
  const faults = [...delivering, ...pairedRuns, ...latencyMeasurements(run)].flatMap(({ id, measurement }) => deliveryFaults(id, measurement));
  faults.push(...boundFaults(run).filter((fault) => !fault.startsWith("dispatch ")));
  return {
    target: "every accepted publish delivered exactly once (every scenario)",
    measured: faults.length === 0 ? "yes" : faults.join("; "),
    met: faults.length === 0,
  };
}

function flowControlTargets(f: FlowControlResult): TargetCheck[] {
  const isolation = ratio(f.unlimitedBesideThrottledPerSecond, f.unlimitedAlonePerSecond);
  return [
    {
      target: `flow control: no one-second window over rate (${f.rate}/s)`,
      measured: `${f.busiestSecond} in the busiest second, ${times(f.rateAccuracy)} of the rate achieved`,
      met: f.busiestSecond <= f.rate,
    },
    {
      target: "flow control: a throttled key does not slow unlimited messages (≥ 80 % of their rate alone)",
      measured: times(isolation),
      met: isolation >= 0.8,
    },
  ];
}

function scheduleTarget(s: ScheduleResult): TargetCheck {
  return {
    target: "schedule p99 firing lateness < 1 s after the tick (every schedule fired once)",
    measured: `${ms(s.arrivedLateMs.p99)} to arrival, ${s.fired}/${s.schedules} fired`,
    met: s.fired === s.schedules && (s.arrivedLateMs.p99 ?? Infinity) < 1000,
  };
}

/**
 * Dispatch against the minimal pipeline (or against itself) in the same run,
 * one target per figure: the goal the latest issue set for it (issue 10 set
 * the first, 28 raised delivery and cost, 39 set the publish path's), named
 * in the target. Figures that depend on the machine (a rate on "this box")
 * are not targets: they say nothing on another machine or another day.
 */
function pipelineTargets(run: BenchRun): TargetCheck[] {
  const both = (id: string) => [find(run, id), find(run, `pipeline-${id}`)] as const;
  const [d2b, p2b] = both("2b-delivered");
  const [d2a, p2a] = both("2a-e2e");
  const [dApi, pApi] = [find(run, "1-publish-api"), find(run, "pipeline-1-publish-only")];
  const check = (target: string, d: number | null | undefined, p: number | null | undefined, met: (r: number) => boolean, format: (n: number) => string): TargetCheck => {
    const r = d != null && p ? d / p : null;
    return { target, measured: r === null ? "n/a" : `${times(r)} (${format(d!)} vs ${format(p!)})`, met: r !== null && met(r) };
  };
  const rate = (n: number) => `${int(n)}/s`;
  const delivered = (s: ScenarioResult | undefined) => s?.measurement.delivery.inWindowPerSecond;
  const idle = cpuPerDelivery(d2b);
  const rounds = run.paired;
  const ownUnderLoad = rounds.length ? median(rounds.map((r) => ratio(cpuOf(r.contended.dispatch), cpuOf(r.dispatch)))) : null;
  const idleRatio = rounds.length ? median(rounds.map((r) => ratio(cpuOf(r.dispatch), cpuOf(r.pipeline)))) : null;
  const hotRatio = rounds.length ? median(rounds.map((r) => ratio(cpuOf(r.contended.dispatch), cpuOf(r.contended.pipeline)))) : null;
  const rows = d2b?.measurement.costs.rowsWritten ?? null;
  const p50 = d2a?.measurement.delivery.latency.p50 ?? null;
  return [
    check("API-only publish/s (nothing delivers) ≥ 0.8× the pipeline's (issue 39)", dApi?.measurement.publish.perSecond, pApi?.measurement.publish.perSecond, (r) => r >= 0.8, rate),
    check("Node CPU per publish, API only, ≤ 1.8× the pipeline's (issue 39)", dApi?.measurement.costs.serviceMicros, pApi?.measurement.costs.serviceMicros, (r) => r <= 1.8, micros),
    check("delivered/s at saturation, 64 in flight (2b) ≥ 1.2× the pipeline's (issue 28)", delivered(d2b), delivered(p2b), (r) => r >= 1.2, rate),
    check("CPU per delivered message, process + Postgres, at saturation (2b) ≤ 1.0× the pipeline's (issue 28)", idle, cpuPerDelivery(p2b), (r) => r <= 1.0, micros),
    check(`the same at ${int(run.plan.e2eRate)}/s offered (2a) ≤ 1.2× the pipeline's (issue 28)`, cpuPerDelivery(d2a), cpuPerDelivery(p2a), (r) => r <= 1.2, micros),
    { target: "rows written per delivered message (2b) ≤ 3.0 (issue 28)", measured: rows === null ? "n/a" : num(rows), met: rows !== null && rows <= 3.0 },
    { target: `p50 publish → arrival at ${int(run.plan.e2eRate)}/s offered (2a) ≤ 5 ms (issue 28)`, measured: `${ms(p50)} (pipeline ${ms(p2a?.measurement.delivery.latency.p50 ?? null)})`, met: p50 !== null && p50 <= 5 },
    {
      target: "under contention (one core busy at a fixed duty cycle): Dispatch's CPU per delivered message ≤ 1.3× its own idle figure (median of the paired rounds; issue 28)",
      measured: ownUnderLoad === null ? "n/a" : times(ownUnderLoad),
      met: ownUnderLoad !== null && ownUnderLoad <= 1.3,
    },
    {
      target: "under contention: Dispatch's CPU ratio to the pipeline no worse than idle (medians of the paired rounds; issue 28)",
      measured: hotRatio === null || idleRatio === null ? "n/a" : `${times(hotRatio)} contended vs ${times(idleRatio)} idle`,
      met: hotRatio !== null && idleRatio !== null && hotRatio <= idleRatio,
    },
  ];
}

/** Dispatch's and the minimal pipeline's figures of one comparison. */
interface Pair {
  figure: string;
  dispatch: number | null;
  pipeline: number | null;
  format: (n: number | null) => string;
}

/** The median over the paired rounds of one service's figure under contention (null without rounds). */
function contendedMedian(run: BenchRun, service: "dispatch" | "pipeline", figure: (m: Measurement) => number): number | null {
  return run.paired.length ? median(run.paired.map((r) => figure(r.contended[service]))) : null;
}

/** The figures Dispatch and the pipeline are compared by, and the counters behind them (2b for costs). */
function pairs(run: BenchRun): Pair[] {
  const both = (id: string) => [find(run, id), find(run, `pipeline-${id}`)] as const;
  const [d2b, p2b] = both("2b-delivered");
  const [d2a, p2a] = both("2a-e2e");
  const [d1, p1] = both("1-publish");
  const [dApi, pApi] = [find(run, "1-publish-api"), find(run, "pipeline-1-publish-only")];
  const rate = (n: number | null) => (n === null ? "n/a" : `${int(n)}/s`);
  const cost = (figure: string, pick: (c: Costs) => number | null, format: (n: number | null) => string = num): Pair => ({
    figure: `${figure} per delivered message (2b)`,
    dispatch: d2b ? pick(d2b.measurement.costs) : null,
    pipeline: p2b ? pick(p2b.measurement.costs) : null,
    format,
  });
  return [
    { figure: "delivered/s, 64 in flight (2b)", dispatch: d2b?.measurement.delivery.inWindowPerSecond ?? null, pipeline: p2b?.measurement.delivery.inWindowPerSecond ?? null, format: rate },
    { figure: "API-only publish/s (nothing delivers)", dispatch: dApi?.measurement.publish.perSecond ?? null, pipeline: pApi?.measurement.publish.perSecond ?? null, format: rate },
    { figure: "publish/s while delivering (1)", dispatch: d1?.measurement.publish.perSecond ?? null, pipeline: p1?.measurement.publish.perSecond ?? null, format: rate },
    { figure: `p99 publish → arrival at ${int(run.plan.e2eRate)}/s offered (2a)`, dispatch: d2a?.measurement.delivery.latency.p99 ?? null, pipeline: p2a?.measurement.delivery.latency.p99 ?? null, format: ms },
    { figure: "CPU µs, service + Postgres, per delivered message (2b)", dispatch: cpuPerDelivery(d2b), pipeline: cpuPerDelivery(p2b), format: micros },
    ...COST_FIGURES.map(([figure, pick, format]) => cost(figure, pick, format)),
    cost("service write system calls", (c) => c.serviceIo?.writes ?? null),
    cost("service read system calls", (c) => c.serviceIo?.reads ?? null),
    { figure: "delivered/s, one core busy with other work (2b contended, median of the paired rounds)", dispatch: contendedMedian(run, "dispatch", rateOf), pipeline: contendedMedian(run, "pipeline", rateOf), format: rate },
    { figure: "CPU µs, service + Postgres, per delivered message (2b contended, median of the paired rounds)", dispatch: contendedMedian(run, "dispatch", cpuOf), pipeline: contendedMedian(run, "pipeline", cpuOf), format: micros },
    { figure: "HOT share of message-table updates (2b)", dispatch: d2b?.measurement.costs.hotRatio ?? null, pipeline: p2b?.measurement.costs.hotRatio ?? null, format: share },
  ];
}

/** Dispatch vs the minimal pipeline, side by side, with the ratio. */
function comparisonTable(run: BenchRun): string {
  return table(["Figure", "Dispatch", "Minimal pipeline", "Dispatch ÷ pipeline"], pairs(run).map((p) => [
    p.figure,
    p.format(p.dispatch),
    p.format(p.pipeline),
    p.dispatch !== null && p.pipeline ? times(p.dispatch / p.pipeline) : "n/a",
  ]));
}

/**
 * Each paired round's delivered rates and CPU per delivery, idle or under
 * contention, with the ratios and their medians; under contention each
 * service's CPU also against its own idle figure of the round.
 */
function pairedTable(rounds: PairedRound[], contended: boolean): string {
  const pairOf = (r: PairedRound) => (contended ? r.contended : r);
  const columns = (r: PairedRound) => {
    const { dispatch, pipeline } = pairOf(r);
    const own = contended ? [ratio(cpuOf(dispatch), cpuOf(r.dispatch)), ratio(cpuOf(pipeline), cpuOf(r.pipeline))] : [];
    return { dispatch, pipeline, ratios: [ratio(rateOf(dispatch), rateOf(pipeline)), ratio(cpuOf(dispatch), cpuOf(pipeline)), ...own] };
  };
  const rows = rounds.map((r, i) => {
    const { dispatch, pipeline, ratios } = columns(r);
    const [rates, cpus, ...own] = ratios.map(times);
    return [`${i + 1} (${r.first} first)`, `${int(rateOf(dispatch))}/s`, `${int(rateOf(pipeline))}/s`, rates!, `${int(cpuOf(dispatch))} µs`, `${int(cpuOf(pipeline))} µs`, cpus!, ...own];
  });
  const medians = (k: number) => times(median(rounds.map((r) => columns(r).ratios[k]!)));
  rows.push(["median", "", "", medians(0), "", "", medians(1), ...(contended ? [medians(2), medians(3)] : [])]);
  const head = ["Round", "Dispatch delivered", "Pipeline delivered", "ratio", "Dispatch CPU + Postgres per delivery", "Pipeline's", "ratio"];
  return table(contended ? [...head, "Dispatch ÷ its idle", "Pipeline ÷ its idle"] : head, rows);
}

/** Crash recovery: every delivery the killed process had in flight resent once, within 10 s, at Dispatch's defaults. */
function crashTarget(c: CrashRecovery): TargetCheck {
  const faults = [
    c.lost > 0 ? `${c.lost} lost` : "",
    c.extraDuplicates > 0 ? `${c.extraDuplicates} extra duplicates` : "",
    c.resentBeforeKill > 0 ? `${c.resentBeforeKill} resent before the SIGKILL` : "",
    c.inFlightAtKill < c.messages ? `only ${c.inFlightAtKill}/${c.messages} in flight at the SIGKILL` : "",
    c.defaultSettings ? "" : `not the default settings (heartbeat ${seconds(c.heartbeatIntervalMs)}, dead after ${seconds(c.deadAfterMs)})`,
  ].filter(Boolean);
  const max = c.redeliveryMs.max;
  return {
    target: "orphaned deliveries redelivered within 10 s at default settings",
    measured: `max ${ms(max)} (p50 ${ms(c.redeliveryMs.p50)}), ${c.redelivered}/${c.messages} redelivered${faults.length ? `; ${faults.join(", ")}` : ""}`,
    met: faults.length === 0 && c.redelivered === c.messages && max !== null && max <= 10_000,
  };
}

/** Scenario 2d and the plain 2b measured right before it, when both ran. */
function noisyPair(run: BenchRun): { alone: Measurement; noisy: Measurement; hanging: NoisyNeighbourRun } | null {
  const alone = find(run, NOISY_ALONE_ID)?.measurement;
  const noisy = find(run, NOISY_ID)?.measurement;
  return run.noisy && alone && noisy ? { alone, noisy, hanging: run.noisy } : null;
}

/** 2d's figure over 2b alone's (null when either is missing or alone's is 0). */
function noisyRatio(pair: { alone: Measurement; noisy: Measurement }, figure: (m: Measurement) => number | null): number | null {
  const [noisy, alone] = [figure(pair.noisy), figure(pair.alone)];
  return noisy !== null && alone ? noisy / alone : null;
}

/** Scenario 2d's targets: the healthy destination beside a hanging one, against 2b alone right before it. */
function noisyTargets(run: BenchRun): TargetCheck[] {
  const pair = noisyPair(run);
  if (!pair) return [];
  const { alone, noisy, hanging } = pair;
  const [rate, p99, statements] = [rateOf, (m: Measurement) => m.delivery.latency.p99, (m: Measurement) => m.costs.statements].map((f) => noisyRatio(pair, f));
  const shown = (r: number | null | undefined) => (r == null ? "n/a" : times(r));
  const latency = (m: Measurement) => `p99 ${ms(m.delivery.latency.p99)}, p50 ${ms(m.delivery.latency.p50)}`;
  const beside = `beside a destination that hangs with ${int(hanging.backlog)} messages due`;
  return [
    {
      target: `noisy neighbour (2d): delivered/s ${beside} ≥ 0.9× 2b alone right before it`,
      measured: `${shown(rate)} (${int(rateOf(noisy))}/s vs ${int(rateOf(alone))}/s); the hanging destination held ${hanging.held.atEnd} open at the end (share ${hanging.share})`,
      met: rate != null && rate >= 0.9,
    },
    {
      target: "noisy neighbour (2d): p99 publish → arrival ≤ 2× 2b alone (p50 for reference)",
      measured: `${shown(p99)} (${latency(noisy)} vs ${latency(alone)})`,
      met: p99 != null && p99 <= 2,
    },
    {
      target: "noisy neighbour (2d): statements per delivered message ≤ 1.1× 2b alone",
      measured: `${shown(statements)} (${num(noisy.costs.statements, 3)} vs ${num(alone.costs.statements, 3)})`,
      met: statements != null && statements <= 1.1,
    },
  ];
}

/** Scenario 2d beside the plain 2b measured right before it, and what the hanging destination held. */
function noisyTable(run: BenchRun): string | null {
  const pair = noisyPair(run);
  if (!pair) return null;
  const { alone, noisy, hanging } = pair;
  const row = (figure: string, pick: (m: Measurement) => number | null, format: (n: number | null) => string, compare = true) => {
    const r = compare ? noisyRatio(pair, pick) : null;
    return [figure, format(pick(alone)), format(pick(noisy)), r === null ? "" : times(r)];
  };
  const rows = [
    row("delivered/s while publishing", rateOf, (n) => (n === null ? "n/a" : `${int(n)}/s`)),
    row("publish → arrival p50", (m) => m.delivery.latency.p50, ms),
    row("publish → arrival p99", (m) => m.delivery.latency.p99, ms),
    row("statements per delivered message", (m) => m.costs.statements, (n) => num(n, 3)),
    row("CPU µs per delivered message, Dispatch + Postgres", (m) => (m.costs.postgresMicros === null ? null : cpuOf(m)), (n) => (n === null ? "n/a" : `${int(n)} µs`)),
    row("CPU while publishing, cores: Dispatch", (m) => m.cpu.focusCores, (n) => num(n), false),
    row("CPU while publishing, cores: other work", (m) => m.cpu.otherCores, (n) => num(n), false),
  ];
  const h = hanging.held;
  const settled = hanging.settled
    ? `Dispatch held its share (${hanging.share}) with ${int(hanging.parked)} lined up off the work list ${ms(hanging.settleMs)} after the last publish, ` +
      `and the statistics counted those writes ${ms(hanging.countedMs)} after it (the measurement started then)`
    : `the backlog had NOT settled when the measurement started, ${ms(hanging.countedMs)} after the last publish (${int(hanging.parked)} lined up off the work list)`;
  return `### 2d: noisy neighbour, against 2b alone measured right before it\n\n` +
    table(["Figure", `2b alone (${NOISY_ALONE_ID})`, `beside the hanging destination (${NOISY_ID})`, "2d ÷ alone"], rows) +
    `\n\nThe hanging destination (its own origin on 127.0.0.1; accepts, never answers): ${int(hanging.backlog)} messages published to it ` +
    `through /v2/batch in ${ms(hanging.publishMs)}; ${settled}. ` +
    `Requests it held open when publishing started / when it ended / at most at once / received in all: ${h.atStart} / ${h.atEnd} / ${h.peak} / ${h.received}.`;
}

/** 2h: what each node of the Citus cluster carried per delivered message, beside the one server of the plain run. */
function citusTable(run: BenchRun, nodes: NodeCosts[]): string | null {
  const plain = run.scenarios.find((s) => s.id === "2h-plain");
  if (!plain) return null;
  const columns: [string, Costs][] = [["one Postgres (2h-plain)", plain.measurement.costs], ...nodes.map((n): [string, Costs] => [n.node, n.costs])];
  const row = (figure: string, pick: (c: Costs) => number | null, format: (n: number | null) => string) => [
    figure,
    ...columns.map(([, c]) => format(pick(c))),
  ];
  const micros = (n: number | null) => (n === null ? "n/a" : `${int(n)} µs`);
  const rows = [
    row("Postgres CPU per delivered message", (c) => c.postgresMicros, micros),
    row("rows written per delivered message", (c) => c.rowsWritten, (n) => num(n, 2)),
    row("WAL bytes per delivered message", (c) => c.walBytes, (n) => (n === null ? "n/a" : int(n))),
    row("commits per delivered message", (c) => c.commits, (n) => num(n, 3)),
    row("statements per delivered message", (c) => c.statements, (n) => num(n, 3)),
  ];
  return `### 2h: Citus, by node

` + table(["Figure", ...columns.map(([name]) => name)], rows) +
    `

Each column counts what that server did for the run's delivered messages (the cluster's columns divide by the same count); ` +
    `Dispatch's own CPU is in the scenario tables (2h-plain, 2h-citus).`;
}

function targetTable(checks: TargetCheck[]): string {
  return table(["Target", "Measured", "Status"], checks.map((c) => [c.target, c.measured, c.met ? "MET" : "MISSED"]));
}

function backlogText(seed: BacklogSeed): string {
  const tables = Object.entries(seed.tables).map(([name, n]) => `dispatch.${name} ${int(n)}`).join(", ");
  const sizes = Object.entries(seed.sizesMiB).map(([name, n]) => `${name} ${(n * MIB_TO_MB).toFixed(0)} MB`).join(", ");
  return [
    `Backlog: ${int(seed.rows)} far-future messages cloned from a probe published with Svc-Delay: 30d (${seed.probeMessageId}).`,
    `Rows cloned: ${tables}; graphile-worker jobs: ${int(seed.engineJobs)}${seed.engineJobs === 0 ? " (the service made no engine job for the probe)" : " (the service made an engine job for the probe, so each clone got one)"}.`,
    `Seeding took ${ms(seed.seedMs)}, VACUUM ANALYZE ${ms(seed.vacuumMs)}; sizes: ${sizes}.`,
    `Source files mentioning a promotion horizon: ${seed.horizonCode.length ? seed.horizonCode.join(", ") : "none"}.`,
  ].join("\n");
}

function retentionText(r: RunRetention): string {
  const mb = (mib: number) => `${(mib * MIB_TO_MB).toFixed(0)} MB`;
  return [
    `### 10-retention: ${int(r.rows)} messages that finished 40 days ago (14-day retention), removed while 1 and 2b run`,
    ``,
    `Seeded in ${ms(r.seedMs)} (each with its attempt row); the removal (src/worker/maintenance/retention.ts, 1,000 rows a statement) ` +
      `removed ${int(r.pacedPerSecond)} rows a second at the maintenance task's pace while 1 and 2b ran, then the rest without rest; ` +
      `${seconds(r.removalMs)} in all, ${int(r.removed)} removed${r.complete ? ", all of them" : " — NOT all of them"}. ` +
      `Messages and attempts with their indexes: ${mb(r.sizesMiB.empty)} empty, ${mb(r.sizesMiB.seeded)} seeded, ` +
      `${mb(r.sizesMiB.afterRemoval)} after the removal and VACUUM (the space is reused by new rows, not returned to the file system), ` +
      `then over three cycles of storing as many rows again and removing them ${r.sizesMiB.cycles.map((c) => `${mb(c.peak)} / ${mb(c.trough)}`).join(", then ")} (peak / after the removal): ${steadyText(r)}. ` +
      `Rates beside the removal: 1-publish-retention and 2b-delivered-retention above; targets in the table at the top.`,
  ].join("\n");
}

type RunRetention = FullRun["retention"];

/** How much the last cycle's peak exceeds the one before's: 0 at the steady state. */
function regrowth(r: RunRetention): number {
  const [before, last] = r.sizesMiB.cycles.slice(-2);
  return (last!.peak - before!.peak) / before!.peak;
}

function steadyText(r: RunRetention): string {
  return `the last peak is ${(regrowth(r) * 100).toFixed(1)} % above the one before, the freed space taking the new rows`;
}

function crashTable(c: CrashRecovery): string {
  const rows: string[][] = [
    [
      "liveness settings in force: heartbeat / dead after",
      `${seconds(c.heartbeatIntervalMs)} / ${seconds(c.deadAfterMs)}${c.defaultSettings ? " (Dispatch's defaults)" : " (NOT the defaults)"}`,
    ],
    ["messages published to the victim / held in flight at the SIGKILL", `${c.messages} / ${c.inFlightAtKill}`],
    ["survivor up before the SIGKILL (dead after + 2 heartbeats, so its own start does not delay its sweep)", ms(c.survivorUpMs)],
    ["SIGKILL → resend arrival p50 / p99 (max)", pct(c.redeliveryMs)],
    [`redelivered / lost (not resent within ${seconds(c.allowanceMs)}) / duplicates beyond the one resend`, `${c.redelivered} / ${c.lost} / ${c.extraDuplicates}`],
  ];
  if (c.resentBeforeKill > 0) rows.push(["resent before the SIGKILL (the held attempt ended early)", String(c.resentBeforeKill)]);
  rows.push(
    ["settled: every message final, no delivery job left", c.settled ? "yes" : `no, not within ${seconds(c.allowanceMs)}`],
    ["Dispatch start-up, victim / survivor", `${ms(c.startupMs.victim)} / ${ms(c.startupMs.survivor)}`],
    ["CPU from the SIGKILL until settled, cores: machine / survivor / bench incl. Postgres / other work", cpuText(c.cpu)],
  );
  const notes = [...c.notes, ...c.dispatchLog.slice(-3).map((line) => `Survivor logged: ${line}`)];
  return `### 6-crash: Crash recovery (two processes, one SIGKILLed with deliveries in flight)\n\n${table(["Figure", "Value"], rows)}` +
    (notes.length ? `\n\n${notes.map((n) => `- ${n}`).join("\n")}` : "");
}

function largeTable(l: LargeMessages): string {
  const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? "n/a" : `${(a / b).toFixed(1)}x`);
  const c = l.costs;
  const rows: string[][] = [
    ["body / DISPATCH_MAX_MESSAGE_SIZE", `${int(l.bodyBytes)} B / ${int(l.maxMessageBytes)} B`],
    [`publish request → 200, one at a time (${l.serial}) p50 / p99`, pct(l.publishMs)],
    ["publish request → whole body at the receiver p50 / p99", pct(l.endToEndMs)],
    ["baseline: the same body POSTed straight to the receiver p50 / p99", pct(l.directPostMs)],
    ["end to end ÷ direct POST (p50)", ratio(l.endToEndMs.p50, l.directPostMs.p50)],
    [`RSS idle / with ${l.inFlight} held in flight / per large message in flight`, `${num(l.idleRssMiB, 0)} / ${num(l.heldRssMiB, 0)} / ${num(l.rssPerInFlightMiB, 1)} MiB`],
    ["CPU per message: Dispatch / Postgres", `${int(c.serviceMicros)} µs / ${c.postgresMicros === null ? "n/a" : `${int(c.postgresMicros)} µs`}`],
    ["WAL per message (body TOASTed, compressed when it compresses) / rows written", `${int(c.walBytes)} B / ${num(c.rowsWritten)}`],
    ["bodies that arrived with the wrong length", String(l.corrupt)],
  ];
  return `### 7-large: 5 MiB messages (DISPATCH_MAX_MESSAGE_SIZE raised to 8 MiB)\n\n${table(["Figure", "Value"], rows)}`;
}

function flowControlTable(f: FlowControlResult): string {
  const rows: string[][] = [
    [`rate limit / messages of the key, published at once`, `${f.rate} per second / ${f.rateMessages}`],
    ["sustained rate: arrivals after the first second's, over first to last arrival (accuracy)", `${num(f.achievedRate, 1)}/s (${times(f.rateAccuracy)})`],
    ["most arrivals in any one-second window", String(f.busiestSecond)],
    [`${int(f.unlimited)} unlimited messages delivered: alone / beside ${int(f.throttled)} waiting on a key at 1 per minute`,
      `${int(f.unlimitedAlonePerSecond)}/s / ${int(f.unlimitedBesideThrottledPerSecond)}/s (${times(ratio(f.unlimitedBesideThrottledPerSecond, f.unlimitedAlonePerSecond))})`],
    ["throttled messages delivered meanwhile (1 per minute allows 1)", String(f.throttledDelivered)],
  ];
  return `### 8-flow-control: rate accuracy and isolation (one process)\n\n${table(["Figure", "Value"], rows)}`;
}

function scheduleTable(s: ScheduleResult): string {
  const rows: string[][] = [
    ["every-minute schedules / fired at the tick", `${s.schedules} / ${s.fired}`],
    ["tick → message created (fired), p50 / p99", pct(s.firedLateMs)],
    ["tick → arrival at the receiver, p50 / p99", pct(s.arrivedLateMs)],
  ];
  return `### 9-schedules: firing lateness (one process, one real tick)\n\n${table(["Figure", "Value"], rows)}`;
}

function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${process.platform} ${process.arch}`;
}

/** The whole report as markdown (`machineText`: the run's machine, when re-rendered elsewhere): machine, command, targets, the comparison with the pipeline, baselines, scenarios. */
export function renderReport(run: BenchRun, checks: TargetCheck[], machineText = machine()): string {
  const pg = run.postgres;
  const settings = Object.entries(pg.settings).map(([k, v]) => `${k}=${v}`).join(", ");
  const part = <T>(value: T | undefined, render: (value: T) => string | null) => {
    const text = value === undefined ? null : render(value);
    return text === null ? [] : [text, ``];
  };
  return [
    `# Benchmark results`,
    ``,
    `- Run: ${run.startedAt}, ${(run.durationMs / 1000).toFixed(0)} s, \`${run.command}\`${run.plan.quick ? " (quick mode)" : ""}`,
    ...(run.only ? [`- Parts run: ${run.only.join(", ")} (\`--only\`); the targets are those these parts alone decide.`] : []),
    `- Machine: ${machineText}`,
    `- Postgres: ${pg.version} (${pg.embedded ? "embedded, temporary cluster" : "DATABASE_URL server, whose CPU counts as other work"}; ${settings})`,
    `- Machine load average (1/5/15 min) at start: ${run.loadAverage.start.map((n) => n.toFixed(2)).join(" / ")}, at end: ${run.loadAverage.end.map((n) => n.toFixed(2)).join(" / ")}`,
    ...(interference(run) ? [interference(run)!] : []),
    ...(run.plan.quick ? ["- Quick mode is a smoke run: 3 s windows without warm-up make every figure, and the backlog ratios most, noisy."] : []),
    `- Load: ${run.plan.concurrency} in flight or fixed rate, ${run.plan.bodyBytes} B bodies, ${run.plan.windowMs / 1000} s windows` +
      `${run.plan.warmupMs ? ` after ${run.plan.warmupMs / 1000} s of unmeasured warm-up publishing` : " (no warm-up)"}; ` +
      `load generator, receiver and Dispatch are separate processes on the same machine.`,
    ``,
    `## Targets`,
    ``,
    targetTable(checks),
    ``,
    ...pipelineSection(run),
    ...peersSection(run),
    ...latencySection(run),
    ...part(run.baselines, (b) => `## Baselines\n\n${baselineTable(b)}`),
    `## Scenarios`,
    ``,
    ...run.scenarios.flatMap((s) => [scenarioTable(run, s), ""]),
    ...part(run.noisy, () => noisyTable(run)),
    ...part(run.citus, (c) => citusTable(run, c.nodes)),
    ...part(run.backlog, backlogText),
    ...part(run.crash, crashTable),
    ...part(run.retention, retentionText),
    ...part(run.large, largeTable),
    ...part(run.flowControl, flowControlTable),
    ...part(run.schedules, scheduleTable),
  ].join("\n");
}

/** Dispatch against the minimal pipeline: the scenarios both ran, and the paired rounds (when those parts ran). */
function pipelineSection(run: BenchRun): string[] {
  const compared = find(run, "pipeline-2b-delivered") !== undefined;
  if (!compared && run.paired.length === 0) return [];
  const comparison = [
    `The minimal pipeline (bench/pipeline.ts) has none of Dispatch's features: a coalesced multi-row INSERT + one NOTIFY per publish batch, ` +
      `a SKIP LOCKED claim with a lease, a signed undici POST (64 in flight), one batched outcome UPDATE. Same receiver, load generator and server, same run. ` +
      `Per-message counters run from before the warm-up until the service stopped.`,
    ``,
    comparisonTable(run),
    ``,
  ];
  const paired = [
    `### 2b in paired rounds`,
    ``,
    `Dispatch's and the pipeline's 2b measured back to back, the order swapped each round: this host's speed drifts within ` +
      `minutes, and a pair taken seconds apart carries less of it than the two 2b scenarios above (bench/paired.ts).`,
    ``,
    pairedTable(run.paired, false),
    ``,
    `Each round's pair again right after, with a process spinning one core at ${Math.round(CONTENTION_DUTY * 100)} % duty (bench/contention.ts):`,
    ``,
    pairedTable(run.paired, true),
    ``,
  ];
  return [`## Dispatch vs minimal pipeline`, ``, ...(compared ? comparison : []), ...(run.paired.length > 0 ? paired : [])];
}

/**
 * Writes bench/results/<timestamp>.json, bench/results/latest.json and
 * bench/RESULTS.md (a run of some parts: only
 * bench/results/<timestamp>-only-<parts>.json); returns the JSON file's path.
 */
export function writeReport(run: BenchRun, checks: TargetCheck[], markdown: string, machineText = machine()): string {
  const dir = `${BENCH}results`;
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify({ ...run, machine: machineText, targets: checks }, null, 2)}\n`;
  const stamp = run.startedAt.replace(/[:.]/g, "-");
  const file = `${dir}/${stamp}${run.only ? `-only-${run.only.join("-")}` : ""}.json`;
  writeFileSync(file, json);
  if (run.only) return file;
  writeFileSync(`${dir}/latest.json`, json);
  writeFileSync(`${BENCH}RESULTS.md`, withReading(markdown));
  return file;
}

/**
 * The hand-written reading of the figures (bench/READING.md) goes after the
 * tables, so a re-run keeps it; update it when the figures change materially.
 */
function withReading(markdown: string): string {
  const reading = `${BENCH}READING.md`;
  return existsSync(reading) ? `${markdown.trimEnd()}\n\n${readFileSync(reading, "utf8").trim()}\n` : markdown;
}
