/**
 * What this machine and this Postgres allow, measured in the same run on the
 * same server (a scratch database), so Dispatch's figures can be read as
 * ratios: plain INSERT commits, INSERT + NOTIFY commits, graphile-worker's
 * add_job / add_jobs, no-op jobs worked, and raw outbound POSTs.
 */
import { EventEmitter } from "node:events";
import { Logger, run, runMigrations } from "graphile-worker";
import { createSql, type Sql } from "../src/db/client";
import type { CpuUse } from "./cpu";
import type { DatabaseServer } from "./database";
import type { Helper } from "./ipc";
import type { Percentiles } from "./stats";

/** Every baseline, per second. */
export interface Baselines {
  insertCommits: number;
  insertNotifyCommits: number;
  addJob: number;
  addJobsBatched: number;
  workedDefaults: number;
  workedBatched: number;
  /** Whether the batched worker preset (`localQueue`, `completeJobBatchDelay`) was accepted by this graphile-worker. */
  batchedPresetApplied: boolean;
  rawPosts: number;
  rawPostLatency: Percentiles;
  /** CPU over all the baselines (set by the caller). */
  cpu?: CpuUse;
}

/** Measurement lengths, ms. */
export interface BaselineDurations {
  /** Run but not counted before each SQL baseline. */
  warmupMs: number;
  sqlMs: number;
  workerMs: number;
  rawMs: number;
}

const CLIENTS = 16;
const BODY = "x".repeat(1024);
const quietLogger = new Logger(() => () => {});

/** Runs every baseline on a scratch database, which is dropped afterwards. */
export async function measureBaselines(
  server: DatabaseServer,
  load: Helper,
  receiverUrl: string,
  durations: BaselineDurations,
  log: (line: string) => void,
): Promise<Baselines> {
  const url = await server.createDatabase("scratch");
  const sql = createSql(url, CLIENTS);
  try {
    await runMigrations({ connectionString: url, logger: quietLogger });
    await sql`create table bench_insert (id bigserial primary key, body text not null)`;
    const insertCommits = await perSecond(sql, durations, (s) => s`insert into bench_insert (body) values (${BODY})`);
    log(`  INSERT commits/s (16 clients): ${insertCommits.toFixed(0)}`);
    const insertNotifyCommits = await perSecond(sql, durations, (s) => s`
      with i as (insert into bench_insert (body) values (${BODY}) returning id)
      select pg_notify('bench', i.id::text) from i`);
    log(`  INSERT + pg_notify commits/s: ${insertNotifyCommits.toFixed(0)}`);
    const addJob = await perSecond(sql, durations, (s) => s`select graphile_worker.add_job('bench_noop', '{}'::json)`);
    log(`  add_job/s (one per transaction): ${addJob.toFixed(0)}`);
    const addJobsBatched =
      100 * (await perSecond(sql, durations, (s) => s`select count(*) from graphile_worker.add_jobs(${jobSpecs(s, 100)})`));
    log(`  add_jobs jobs/s (100 per call): ${addJobsBatched.toFixed(0)}`);
    const defaults = await workedPerSecond(sql, url, durations.workerMs, 4_000, {});
    log(`  no-op jobs worked/s, defaults: ${defaults.rate.toFixed(0)}`);
    const batchedPreset = { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 5 } };
    const batched = await workedPerSecond(sql, url, durations.workerMs, 25_000, batchedPreset);
    log(`  no-op jobs worked/s, localQueue 500 + completeJobBatchDelay 5: ${batched.rate.toFixed(0)}` +
      (batched.localQueue ? "" : " (local queue NOT in use: preset ignored)"));
    const raw = await load.call<{ perSecond: number; latency: Percentiles }>(
      "raw",
      { target: `${receiverUrl}/raw`, concurrency: 64, durationMs: durations.rawMs, bodyBytes: 1024 },
      durations.rawMs + 30_000,
    );
    log(`  undici POSTs/s to the receiver (64 in flight): ${raw.perSecond.toFixed(0)}`);
    return {
      insertCommits,
      insertNotifyCommits,
      addJob,
      addJobsBatched,
      workedDefaults: defaults.rate,
      workedBatched: batched.rate,
      batchedPresetApplied: batched.localQueue,
      rawPosts: raw.perSecond,
      rawPostLatency: raw.latency,
    };
  } finally {
    await sql.end({ timeout: 5 });
    await server.dropDatabase(url);
  }
}

/** `count` no-op job specs as one array parameter of `add_jobs`. */
function jobSpecs(sql: Sql, count: number) {
  return sql`array(
    select row('bench_noop', json_build_object('n', g), null, null, null, null, null, null)::graphile_worker.job_spec
    from generate_series(1, ${count}::int) g)`;
}

/**
 * Completions per second of `statement` with 16 clients each running it in a
 * loop (every statement is its own transaction), after a short warm-up.
 */
async function perSecond(sql: Sql, durations: BaselineDurations, statement: (sql: Sql) => Promise<unknown>): Promise<number> {
  const measureFrom = Date.now() + durations.warmupMs;
  const end = measureFrom + durations.sqlMs;
  let count = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) {
        await statement(sql);
        if (Date.now() >= measureFrom) count++;
      }
    }),
  );
  return (count * 1000) / (Date.now() - measureFrom);
}

/**
 * Seeds `expectedRate × duration` no-op jobs, runs graphile-worker with
 * `preset` for `durationMs` (or until they are all done, measuring up to the
 * last completion) and returns completions per second
 * and whether a local queue was in use (its `localQueue:init` event fired).
 */
async function workedPerSecond(
  sql: Sql,
  url: string,
  durationMs: number,
  expectedRate: number,
  preset: GraphileConfig.Preset,
): Promise<{ rate: number; localQueue: boolean }> {
  await sql`truncate graphile_worker._private_jobs`;
  const seeded = Math.ceil((expectedRate * durationMs) / 1000);
  for (let added = 0; added < seeded; added += 10_000) {
    await sql`select count(*) from graphile_worker.add_jobs(${jobSpecs(sql, Math.min(10_000, seeded - added))})`;
  }
  await sql`vacuum analyze graphile_worker._private_jobs`;
  const events = new EventEmitter();
  let completed = 0;
  let lastAt = 0;
  let localQueue = false;
  events.on("localQueue:init", () => (localQueue = true));
  events.on("job:complete", () => {
    completed++;
    lastAt = Date.now();
  });
  const runner = await run({
    connectionString: url,
    logger: quietLogger,
    noHandleSignals: true,
    events,
    preset,
    taskList: { bench_noop: async () => {} },
  });
  const start = Date.now();
  while (Date.now() < start + durationMs && completed < seeded) await new Promise((resolve) => setTimeout(resolve, 20));
  const end = completed >= seeded ? lastAt : Date.now();
  const done = completed;
  await runner.stop();
  await sql`truncate graphile_worker._private_jobs`;
  return { rate: (done * 1000) / Math.max(1, end - start), localQueue };
}
