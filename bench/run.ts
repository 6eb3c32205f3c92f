/**
 * `npm run bench [-- --quick]`: measures Dispatch as it is in src/.
 *
 * Starts a Postgres server (embedded in a temporary folder, or `DATABASE_URL`
 * where fresh databases are created and dropped), a receiver helper and a load
 * generator helper, measures the baselines, then runs every scenario against
 * a freshly started `dispatch start --role all` on a fresh database (an API
 * and two worker processes for scale-out; two processes for crash recovery,
 * one SIGKILLed). Prints the tables and writes bench/results/<timestamp>.json,
 * latest.json and bench/RESULTS.md. Every child is killed at the end, on
 * failure and on a signal; a watchdog ends a run that overstays its budget.
 * The minimal pipeline (bench/pipeline.ts) runs the publish, delivered-rate
 * and end-to-end scenarios in the same run.
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { seedBacklog } from "./backlog";
import { measureBaselines } from "./baselines";
import { CONTENTION_DUTY } from "./contention";
import { cpuSnapshot, cpuUseSince } from "./cpu";
import { crashRecovery } from "./crash-recovery";
import { type DatabaseServer, startDatabaseServer } from "./database";
import { killAllDispatch } from "./dispatch";
import { flowControl } from "./flow-control";
import { type Helper, startHelper } from "./ipc";
import { largeMessages } from "./large-messages";
import { type Pair, pairedDelivered } from "./paired";
import { pipelineScenarios } from "./pipeline-scenarios";
import { checkTargets, renderReport, writeReport, type BenchRun } from "./report";
import { retentionUnderLoad } from "./retention";
import { scaleOut } from "./scale-out";
import { scheduleLateness } from "./schedules";
import {
  type BenchContext,
  benchPids,
  delayPrecision,
  endToEndAtRate,
  fanOut,
  type Plan,
  publishApiOnly,
  publishThenDeliver,
  type ScenarioResult,
} from "./scenarios";

const FULL: Plan = {
  quick: false,
  windowMs: 15_000,
  drainMs: 20_000,
  publishDrainMs: 5_000,
  warmupMs: 2_000,
  concurrency: 64,
  bodyBytes: 1024,
  e2eRate: 1000,
  fanOutRate: 10,
  fanOutEndpoints: 100,
  delayCount: 300,
  delayRate: 50,
  delaySeconds: [1, 5],
  backlogRows: 1_000_000,
  crashMessages: 50,
  crashAllowanceMs: 30_000,
};

const QUICK: Plan = {
  ...FULL,
  quick: true,
  windowMs: 3_000,
  drainMs: 4_000,
  publishDrainMs: 1_500,
  warmupMs: 0,
  delayCount: 100,
  delayRate: 100,
  delaySeconds: [1, 3],
  backlogRows: 100_000,
};

/** Baseline measurement lengths, ms. */
const BASELINE_MS = {
  full: { warmupMs: 300, sqlMs: 4_000, workerMs: 4_000, rawMs: 4_000 },
  quick: { warmupMs: 100, sqlMs: 1_000, workerMs: 1_000, rawMs: 1_000 },
};

/** The run is abandoned (children killed, exit 1) past this. */
const WATCHDOG_MS = { full: 20 * 60_000, quick: 8 * 60_000 };
/** Rounds of the paired 2b (bench/paired.ts). */
const PAIRED_ROUNDS = { full: 3, quick: 1 };

const began = Date.now();
/** Progress lines carry the seconds since the run began. */
const log = (line: string) => console.log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${line}`);

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
  const plan = values.quick ? QUICK : FULL;
  const startedAt = new Date();
  const loadBefore = loadavg();
  const cleanup = new Cleanup();
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS[plan.quick ? "quick" : "full"] / 1000} s; giving up`);
    void cleanup.run().finally(() => process.exit(1));
  }, WATCHDOG_MS[plan.quick ? "quick" : "full"]);
  watchdog.unref();
  let interrupted = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    // Ctrl-C reaches this process more than once (directly, and relayed by npm and tsx): clean up once.
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`bench: ${signal}, stopping`);
      setTimeout(() => process.exit(130), 30_000).unref();
      void cleanup.run().finally(() => process.exit(130));
    });
  }

  try {
    log(`Dispatch benchmark (${plan.quick ? "quick" : "full"} mode)`);
    const [server, receiverStart, loadStart] = await Promise.all([
      startDatabaseServer(process.env.DATABASE_URL).then((server) => (cleanup.server = server)),
      startHelper<{ url: string }>("./receiver.ts").then((started) => (cleanup.helpers.push(started.helper), started)),
      startHelper<boolean>("./load.ts").then((started) => (cleanup.helpers.push(started.helper), started)),
    ]);
    const load = loadStart.helper;
    log(`Postgres: ${server.version.split(",")[0]} (${server.embedded ? "embedded" : "DATABASE_URL"})`);
    const ctx: BenchContext = { server, receiver: receiverStart.helper, receiverUrl: receiverStart.ready.url, load, plan, log };

    log("Baselines:");
    const baselineCpu = cpuSnapshot(benchPids(ctx));
    const baselines = await measureBaselines(server, load, ctx.receiverUrl, BASELINE_MS[plan.quick ? "quick" : "full"], log);
    baselines.cpu = cpuUseSince(baselineCpu, benchPids(ctx));
    const scenarios: ScenarioResult[] = [];
    const report = (results: ScenarioResult[]) => {
      for (const s of results) {
        const { publish, delivery } = s.measurement;
        log(`  ${s.id}: ${publish.perSecond.toFixed(0)} publishes/s, ${delivery.inWindowPerSecond.toFixed(0)} delivered/s, ` +
          `${delivery.distinct}/${delivery.expected} arrived, p99 ${delivery.latency.p99 ?? "n/a"} ms`);
        scenarios.push(s);
      }
    };

    log("Scenarios 1 and 2b (empty tables):");
    report(await onFreshDatabase(server, "empty", (url) => publishThenDeliver(ctx, url, "empty")));
    log("Scenario 1-api (publish, API role alone):");
    report([await publishApiOnly(ctx)]);
    log("Scenario 2a (end-to-end at a fixed rate):");
    report([await endToEndAtRate(ctx)]);
    log("Scenario 2c (delivered rate, 1 API + 2 worker processes):");
    report([await scaleOut(ctx)]);
    log("Minimal pipeline (1, 2b, publish alone, 2a):");
    report(await pipelineScenarios(ctx));
    log(`Scenario 2b in ${PAIRED_ROUNDS[plan.quick ? "quick" : "full"]} paired rounds (Dispatch and the pipeline back to back, ` +
      `idle and with one core ${Math.round(CONTENTION_DUTY * 100)} % busy with other work):`);
    const paired = await pairedDelivered(ctx, PAIRED_ROUNDS[plan.quick ? "quick" : "full"]);
    const rates = (pair: Pair) => `Dispatch ${pair.dispatch.delivery.inWindowPerSecond.toFixed(0)} delivered/s, pipeline ${pair.pipeline.delivery.inWindowPerSecond.toFixed(0)}`;
    for (const [i, r] of paired.entries()) log(`  round ${i + 1}: ${rates(r)}; contended: ${rates(r.contended)}`);
    log("Scenario 3 (fan-out):");
    report([await fanOut(ctx)]);
    log("Scenario 4 (delay precision):");
    report([await delayPrecision(ctx)]);
    log(`Scenario 5 (backlog of ${plan.backlogRows.toLocaleString("en-US")} future messages): seeding`);
    const { backlog, results } = await onFreshDatabase(server, "backlog", async (url) => {
      const backlog = await seedBacklog(ctx, url);
      log(`  seeded in ${(backlog.seedMs / 1000).toFixed(1)} s, VACUUM ANALYZE ${(backlog.vacuumMs / 1000).toFixed(1)} s; rerunning 1 and 2b`);
      return { backlog, results: await publishThenDeliver(ctx, url, "backlog") };
    });
    report(results);
    log("Scenario 6 (crash recovery: the survivor redelivers what a SIGKILLed process had in flight):");
    const crash = await crashRecovery(ctx);
    log(`  ${crash.redelivered}/${crash.messages} redelivered, SIGKILL → redelivery p50 ${crash.redeliveryMs.p50 ?? "n/a"} ms, ` +
      `max ${crash.redeliveryMs.max ?? "n/a"} ms (heartbeat ${crash.heartbeatIntervalMs} ms, dead after ${crash.deadAfterMs} ms)`);

    log("Scenario 7 (5 MiB messages, size limit raised):");
    const large = await largeMessages(ctx);
    log(`  publish p50 ${large.publishMs.p50?.toFixed(0)} ms, end to end p50 ${large.endToEndMs.p50?.toFixed(0)} ms ` +
      `(direct POST ${large.directPostMs.p50?.toFixed(0)} ms), ${large.rssPerInFlightMiB.toFixed(1)} MiB RSS per message in flight`);

    log("Scenario 8 (flow control: rate accuracy, and unlimited messages beside a throttled key):");
    const flow = await flowControl(ctx);
    log(`  ${flow.achievedRate.toFixed(1)}/s of ${flow.rate}/s, busiest second ${flow.busiestSecond}; unlimited ` +
      `${flow.unlimitedAlonePerSecond.toFixed(0)}/s alone, ${flow.unlimitedBesideThrottledPerSecond.toFixed(0)}/s beside the throttled key`);
    log("Scenario 9 (schedule firing lateness):");
    const schedules = await scheduleLateness(ctx);
    log(`  ${schedules.fired}/${schedules.schedules} fired, tick → arrival p50 ${schedules.arrivedLateMs.p50?.toFixed(0)} ms, ` +
      `p99 ${schedules.arrivedLateMs.p99?.toFixed(0)} ms`);

    log(`Scenario 10 (retention: ${plan.backlogRows.toLocaleString("en-US")} expired messages removed while 1 and 2b run):`);
    const retention = await retentionUnderLoad(ctx);
    report(retention.results);
    log(`  removed ${retention.removed.toLocaleString("en-US")} in ${(retention.removalMs / 1000).toFixed(0)} s` +
      `${retention.complete ? "" : " (NOT all)"}; messages+attempts ${retention.sizesMiB.seeded.toFixed(0)} MiB seeded, ` +
      `${retention.sizesMiB.afterRemoval.toFixed(0)} MiB after removal and VACUUM; cycles (peak/after) ` +
      retention.sizesMiB.cycles.map((c) => `${c.peak.toFixed(0)}/${c.trough.toFixed(0)} MiB`).join(", "));

    const run: BenchRun = {
      command: `npm run bench${plan.quick ? " -- --quick" : ""}`,
      startedAt: startedAt.toISOString(),
      durationMs: Date.now() - startedAt.getTime(),
      plan,
      postgres: { version: server.version, embedded: server.embedded, settings: server.settings },
      loadAverage: { start: loadBefore, end: loadavg() },
      baselines,
      scenarios: scenarios.sort((a, b) => a.id.localeCompare(b.id)),
      backlog,
      crash,
      large,
      flowControl: flow,
      paired,
      schedules,
      retention: { ...retention, results: undefined },
    };
    const checks = checkTargets(run);
    const markdown = renderReport(run, checks);
    const file = writeReport(run, checks, markdown);
    console.log(`\n${markdown}`);
    log(`Wrote ${file}, bench/results/latest.json and bench/RESULTS.md (${(run.durationMs / 1000).toFixed(0)} s).`);
    return 0;
  } finally {
    clearTimeout(watchdog);
    await cleanup.run();
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

/** What must be stopped however the run ends; runs once. */
class Cleanup {
  server: DatabaseServer | null = null;
  helpers: Helper[] = [];
  private done: Promise<void> | null = null;

  run(): Promise<void> {
    this.done ??= (async () => {
      killAllDispatch();
      await Promise.allSettled(this.helpers.map((helper) => helper.kill()));
      await this.server?.stop().catch((error: Error) => console.error(`bench: cleanup: ${error.message}`));
    })();
    return this.done;
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`bench failed: ${error.stack ?? error.message}`);
    process.exit(1);
  },
);
