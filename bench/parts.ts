/**
 * The parts of a benchmark run, in the order a full run takes them; each
 * logs its progress and adds what it measured to the run's record.
 * `npm run bench -- --only <part>[,<part>...]` runs some of them.
 */
import { seedBacklog } from "./backlog";
import { measureBaselines } from "./baselines";
import { CONTENTION_DUTY } from "./contention";
import { cpuSnapshot, cpuUseSince } from "./cpu";
import { citusSpread } from "./citus";
import { crashRecovery } from "./crash-recovery";
import type { DatabaseServer } from "./database";
import { BOUND_MS, fairness as fairnessRun } from "./fairness";
import { flowControl } from "./flow-control";
import { largeMessages } from "./large-messages";
import { noisyNeighbour } from "./noisy-neighbour";
import { rateAtBound } from "./latency-bound";
import { type Pair, pairedAtRate, pairedDelivered } from "./paired";
import { PROJECTS, projectRounds } from "./projects";
import { tracingRounds } from "./tracing";
import { PEERS } from "./peers/peers";
import { peerScenarios } from "./peers/scenarios";
import { pipelineScenarios } from "./pipeline-scenarios";
import type { BenchRun } from "./report";
import { retentionUnderLoad } from "./retention";
import { scaleOut } from "./scale-out";
import { scheduleLateness } from "./schedules";
import {
  type BenchContext,
  benchPids,
  delayPrecision,
  endToEndAtRate,
  fanOut,
  publishApiOnly,
  publishThenDeliver,
  type ScenarioResult,
} from "./scenarios";

/** What the parts measured: a run's record without its header. */
export type Measured = Omit<BenchRun, "command" | "only" | "startedAt" | "durationMs" | "plan" | "postgres" | "loadAverage">;

type Part = (ctx: BenchContext, into: Measured) => Promise<void>;

/** Baseline measurement lengths, ms. */
const BASELINE_MS = {
  full: { warmupMs: 300, sqlMs: 4_000, workerMs: 4_000, rawMs: 4_000 },
  quick: { warmupMs: 100, sqlMs: 1_000, workerMs: 1_000, rawMs: 1_000 },
};
/** Rounds of the paired 2b (bench/paired.ts). */
const PAIRED_ROUNDS = { full: 3, quick: 1 };

const mode = (ctx: BenchContext) => (ctx.plan.quick ? "quick" : "full");

/** Logs each result's headline figures and adds it to the record. */
function record(ctx: BenchContext, into: Measured, results: ScenarioResult[]): void {
  for (const s of results) {
    const { publish, delivery } = s.measurement;
    ctx.log(`  ${s.id}: ${publish.perSecond.toFixed(0)} publishes/s, ${delivery.inWindowPerSecond.toFixed(0)} delivered/s, ` +
      `${delivery.distinct}/${delivery.expected} arrived, p99 ${delivery.latency.p99 ?? "n/a"} ms`);
    into.scenarios.push(s);
  }
}

/** Runs `body` on a new database of `server`, dropped afterwards. */
async function onFreshDatabase<T>(server: DatabaseServer, label: string, body: (url: string) => Promise<T>): Promise<T> {
  const url = await server.createDatabase(label);
  try {
    return await body(url);
  } finally {
    await server.dropDatabase(url);
  }
}

/** A part that runs scenarios and records their results. */
function scenarios(title: string, measure: (ctx: BenchContext) => Promise<ScenarioResult[]>): Part {
  return async (ctx, into) => {
    ctx.log(title);
    record(ctx, into, await measure(ctx));
  };
}

const baselines: Part = async (ctx, into) => {
  ctx.log("Baselines:");
  const cpu = cpuSnapshot(benchPids(ctx));
  into.baselines = await measureBaselines(ctx.server, ctx.load, ctx.receiverUrl, BASELINE_MS[mode(ctx)], ctx.log);
  into.baselines.cpu = cpuUseSince(cpu, benchPids(ctx));
};

const paired: Part = async (ctx, into) => {
  ctx.log(`Scenario 2b in ${PAIRED_ROUNDS[mode(ctx)]} paired rounds (Dispatch and the pipeline back to back, ` +
    `idle and with one core ${Math.round(CONTENTION_DUTY * 100)} % busy with other work):`);
  into.paired = await pairedDelivered(ctx, PAIRED_ROUNDS[mode(ctx)]);
  const rates = (pair: Pair) => `Dispatch ${pair.dispatch.delivery.inWindowPerSecond.toFixed(0)} delivered/s, pipeline ${pair.pipeline.delivery.inWindowPerSecond.toFixed(0)}`;
  for (const [i, r] of into.paired.entries()) ctx.log(`  round ${i + 1}: ${rates(r)}; contended: ${rates(r.contended)}`);
};

const pairedLatency: Part = async (ctx, into) => {
  ctx.log(`Scenario 2a in ${PAIRED_ROUNDS[mode(ctx)]} paired rounds (Dispatch and the pipeline back to back at ${ctx.plan.e2eRate}/s, ` +
    `idle and with one core ${Math.round(CONTENTION_DUTY * 100)} % busy with other work):`);
  into.pairedAtRate = await pairedAtRate(ctx, PAIRED_ROUNDS[mode(ctx)]);
  const p99s = (pair: Pair) => `Dispatch p99 ${pair.dispatch.delivery.latency.p99 ?? "n/a"} ms, pipeline ${pair.pipeline.delivery.latency.p99 ?? "n/a"} ms`;
  for (const [i, r] of into.pairedAtRate.entries()) ctx.log(`  round ${i + 1}: ${p99s(r)}; contended: ${p99s(r.contended)}`);
};

const bound: Part = async (ctx, into) => {
  ctx.log("Throughput at a latency bound (the highest offered rate with p99 publish → arrival within it, by service):");
  into.bound = [];
  for (const service of ["dispatch", "pipeline", ...PEERS.map((peer) => peer.service)] as const) into.bound.push(await rateAtBound(ctx, service));
  ctx.log(`  ${into.bound.map((s) => `${s.service} ${s.rateAtBound ?? "none"}/s`).join(", ")}`);
};

const backlog: Part = async (ctx, into) => {
  ctx.log(`Scenario 5 (backlog of ${ctx.plan.backlogRows.toLocaleString("en-US")} future messages): seeding`);
  const { seed, results } = await onFreshDatabase(ctx.server, "backlog", async (url) => {
    const seed = await seedBacklog(ctx, url);
    ctx.log(`  seeded in ${(seed.seedMs / 1000).toFixed(1)} s, VACUUM ANALYZE ${(seed.vacuumMs / 1000).toFixed(1)} s; rerunning 1 and 2b`);
    return { seed, results: await publishThenDeliver(ctx, url, "backlog") };
  });
  into.backlog = seed;
  record(ctx, into, results);
};

const crash: Part = async (ctx, into) => {
  ctx.log("Scenario 6 (crash recovery: the survivor redelivers what a SIGKILLed process had in flight):");
  const c = (into.crash = await crashRecovery(ctx));
  ctx.log(`  ${c.redelivered}/${c.messages} redelivered, SIGKILL → redelivery p50 ${c.redeliveryMs.p50 ?? "n/a"} ms, ` +
    `max ${c.redeliveryMs.max ?? "n/a"} ms (heartbeat ${c.heartbeatIntervalMs} ms, dead after ${c.deadAfterMs} ms)`);
};

const large: Part = async (ctx, into) => {
  ctx.log("Scenario 7 (5 MiB messages, size limit raised):");
  const l = (into.large = await largeMessages(ctx));
  ctx.log(`  publish p50 ${l.publishMs.p50?.toFixed(0)} ms, end to end p50 ${l.endToEndMs.p50?.toFixed(0)} ms ` +
    `(direct POST ${l.directPostMs.p50?.toFixed(0)} ms), ${l.rssPerInFlightMiB.toFixed(1)} MiB RSS per message in flight`);
};

const flow: Part = async (ctx, into) => {
  ctx.log("Scenario 8 (flow control: rate accuracy, and unlimited messages beside a throttled key):");
  const f = (into.flowControl = await flowControl(ctx));
  ctx.log(`  ${f.achievedRate.toFixed(1)}/s of ${f.rate}/s, busiest second ${f.busiestSecond}; unlimited ` +
    `${f.unlimitedAlonePerSecond.toFixed(0)}/s alone, ${f.unlimitedBesideThrottledPerSecond.toFixed(0)}/s beside the throttled key`);
};

const schedules: Part = async (ctx, into) => {
  ctx.log("Scenario 9 (schedule firing lateness):");
  const s = (into.schedules = await scheduleLateness(ctx));
  ctx.log(`  ${s.fired}/${s.schedules} fired, tick → arrival p50 ${s.arrivedLateMs.p50?.toFixed(0)} ms, ` +
    `p99 ${s.arrivedLateMs.p99?.toFixed(0)} ms`);
};

const retention: Part = async (ctx, into) => {
  ctx.log(`Scenario 10 (retention: ${ctx.plan.backlogRows.toLocaleString("en-US")} expired messages removed while 1 and 2b run):`);
  const { results, ...r } = await retentionUnderLoad(ctx);
  record(ctx, into, results);
  into.retention = { ...r, results: undefined };
  ctx.log(`  removed ${r.removed.toLocaleString("en-US")} in ${(r.removalMs / 1000).toFixed(0)} s` +
    `${r.complete ? "" : " (NOT all)"}; messages+attempts ${r.sizesMiB.seeded.toFixed(0)} MiB seeded, ` +
    `${r.sizesMiB.afterRemoval.toFixed(0)} MiB after removal and VACUUM; cycles (peak/after) ` +
    r.sizesMiB.cycles.map((c) => `${c.peak.toFixed(0)}/${c.trough.toFixed(0)} MiB`).join(", "));
};

const noisy: Part = async (ctx, into) => {
  ctx.log("Scenario 2d (noisy neighbour: 2b alone, then 2b beside a destination that hangs with 10,000 messages due):");
  const { results, noisy: n } = await noisyNeighbour(ctx);
  record(ctx, into, results);
  into.noisy = n;
  ctx.log(`  hanging destination: share ${n.share} held ${(n.settleMs / 1000).toFixed(1)} s after its backlog was published, ${n.parked} lined up, ` +
    `counted after ${(n.countedMs / 1000).toFixed(1)} s${n.settled ? "" : " (NOT settled)"}; held open at the start / end of publishing ` +
    `${n.held.atStart} / ${n.held.atEnd}, at most ${n.held.peak}, ${n.held.received} received`);
};

const fairness: Part = async (ctx, into) => {
  ctx.log("Scenario 2f (fairness: another project's 20 new messages beside one project's backlog):");
  const f = await fairnessRun(ctx);
  into.fairness = f;
  ctx.log(`  ${f.arrived}/${f.fresh} arrived beside a ${f.backlog.toLocaleString("en-US")}-message backlog (published in ${(f.publishMs / 1000).toFixed(1)} s): ` +
    `p50 ${f.latency.p50?.toFixed(0) ?? "n/a"} ms, max ${f.latency.max?.toFixed(0) ?? "n/a"} ms (bound ${BOUND_MS} ms); ` +
    `${f.waitingAtPublish} of the backlog waiting at their publish, ${f.waitingAtEnd} after`);
};

/** Scenario 2h: 2b over four projects on one Postgres, then on a Citus 1 + 2 cluster, with the cluster's costs by node. */
async function citus(ctx: BenchContext, into: Measured): Promise<void> {
  ctx.log("Scenario 2h (2b over 4 projects: one Postgres, then Citus with a coordinator and 2 workers):");
  const run = await citusSpread(ctx);
  if (run === null) return;
  record(ctx, into, [run.plain, run.citus]);
  into.citus = { nodes: run.nodes };
  for (const { node, costs } of run.nodes) {
    ctx.log(`  ${node}: ${costs.postgresMicros?.toFixed(0) ?? "n/a"} µs Postgres CPU, ${costs.rowsWritten.toFixed(2)} rows, ` +
      `${costs.walBytes.toFixed(0)} B WAL, ${costs.commits.toFixed(3)} commits per delivered message`);
  }
}

/** Every part by name, in a full run's order. */
export const PARTS: Record<string, Part> = {
  baselines,
  publish: scenarios("Scenarios 1 and 2b (empty tables):", (ctx) => onFreshDatabase(ctx.server, "empty", (url) => publishThenDeliver(ctx, url, "empty"))),
  api: scenarios("Scenario 1-api (publish, API role alone):", async (ctx) => [await publishApiOnly(ctx)]),
  e2e: scenarios("Scenario 2a (end-to-end at a fixed rate):", async (ctx) => [await endToEndAtRate(ctx)]),
  "scale-out": scenarios("Scenario 2c (delivered rate, 1 API + 2 worker processes):", async (ctx) => [await scaleOut(ctx)]),
  pipeline: scenarios("Minimal pipeline (1, 2b, publish alone, 2a):", pipelineScenarios),
  peers: scenarios("Peers: webhook deliverers on pg-boss and on graphile-worker (1, 2b, 2a):", peerScenarios),
  paired,
  "paired-2a": pairedLatency,
  bound,
  projects: scenarios(`Scenario 2e (2b in 1 project and over ${PROJECTS}, in ${PAIRED_ROUNDS.full} paired rounds):`, (ctx) => projectRounds(ctx, PAIRED_ROUNDS[mode(ctx)])),
  tracing: scenarios(`Scenario 2g (2b with tracing off and on, in ${PAIRED_ROUNDS.full} paired rounds):`, (ctx) => tracingRounds(ctx, PAIRED_ROUNDS[mode(ctx)])),
  fanout: scenarios("Scenario 3 (fan-out):", async (ctx) => [await fanOut(ctx)]),
  delay: scenarios("Scenario 4 (delay precision):", async (ctx) => [await delayPrecision(ctx)]),
  backlog,
  crash,
  large,
  flow,
  schedules,
  retention,
  noisy,
  fairness,
  citus,
};
