/**
 * `npm run bench:profile -- [--role api|all] [--service dispatch|pipeline] [--seconds N] [--concurrency N | --rate N] [--plain]`:
 * one service under closed-loop publishing, measured as the bench measures
 * it (CPU µs per message from /proc, rows, WAL, statements, commits) and
 * profiled with `node --cpu-prof`; prints where the process's busy time went
 * (bench/cpu-profile.ts). `--keep` keeps the profile; `--plain` measures without profiling. `--role api` (the default) publishes with nothing
 * delivering, as scenario 1-api; `--role all` publishes and delivers, as 2b;
 * `--rate N` offers N publishes a second instead (open loop), as 2a at 1,000/s,
 * and prints publish → arrival percentiles.
 * The minimal pipeline is profiled the same way with `--service pipeline`.
 * Postgres is embedded in a temporary folder unless DATABASE_URL is set;
 * `BENCH_NODE_FLAGS` adds flags to the service's `node` (e.g. `--max-semi-space-size=32`).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { renderProfile, summariseProfile } from "./cpu-profile";
import { startDatabaseServer } from "./database";
import { killAllDispatch, startServiceProcess } from "./dispatch";
import { startHelper } from "./ipc";
import { type BenchContext, measure, MESSAGES, type Plan } from "./scenarios";

const { values } = parseArgs({
  options: {
    role: { type: "string", default: "api" },
    service: { type: "string", default: "dispatch" },
    seconds: { type: "string", default: "10" },
    concurrency: { type: "string", default: "64" },
    /** Publishes offered a second (open loop, as scenario 2a) instead of `concurrency` in flight. */
    rate: { type: "string" },
    /** Keep the .cpuprofile (its path is printed) to open in Chrome's DevTools. */
    keep: { type: "boolean", default: false },
    /** Measure without the profiler, whose sampling adds to the CPU counted per message. */
    plain: { type: "boolean", default: false },
  },
});
const role = values.role === "all" ? "all" : "api";
const pipeline = values.service === "pipeline";
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const rate = values.rate === undefined ? null : Number(values.rate);

const plan = { quick: true, warmupMs: 2_000, bodyBytes: 1024, publishDrainMs: 5_000, concurrency } as Plan;
const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  const profiles = mkdtempSync(join(tmpdir(), "dispatch-profile-"));
  const [server, receiver, load] = await Promise.all([
    startDatabaseServer(process.env.DATABASE_URL),
    startHelper<{ url: string }>("./receiver.ts"),
    startHelper<boolean>("./load.ts"),
  ]);
  try {
    const ctx: BenchContext = { server, receiver: receiver.helper, receiverUrl: receiver.ready.url, load: load.helper, plan, log };
    const databaseUrl = await server.createDatabase("profile");
    const profiling = values.plain ? [] : ["--cpu-prof", `--cpu-prof-dir=${profiles}`];
    const program = pipeline
      ? ["--import", "tsx", "bench/pipeline.ts", ...(role === "api" ? ["--no-workers"] : [])]
      : ["bin/dispatch.js", "start", "--role", role];
    const flags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
    const service = await startServiceProcess(databaseUrl, [...flags, ...profiling, ...program]);
    const run = "profile";
    const m = await measure(ctx, service, {
      run,
      databaseUrl,
      messageTable: pipeline ? "pipeline.messages" : MESSAGES,
      publishOnly: role === "api",
      destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: rate === null ? { kind: "closed", concurrency } : { kind: "open", rate, maxInFlight: 512 },
      durationMs: seconds * 1000,
      endpoints: 1,
      drainMs: role === "api" ? 0 : 20_000,
    });
    const { costs } = m;
    log(`${pipeline ? "pipeline" : "dispatch"} --role ${role}: ${m.publish.perSecond.toFixed(0)} publishes/s, ` +
      `${m.delivery.inWindowPerSecond.toFixed(0)} delivered/s, other work ${m.cpu.otherCores.toFixed(2)} cores`);
    log(`per ${costs.unit}: process ${costs.serviceMicros.toFixed(0)} µs, Postgres ${costs.postgresMicros?.toFixed(0) ?? "n/a"} µs, ` +
      `rows ${costs.rowsWritten.toFixed(2)}, WAL ${costs.walBytes.toFixed(0)} B, ` +
      `statements ${costs.statements?.toFixed(3) ?? "n/a"}, commits ${costs.commits.toFixed(3)}, ` +
      `system calls: ${costs.serviceIo.reads.toFixed(2)} reads (${costs.serviceIo.readBytes.toFixed(0)} B), ` +
      `${costs.serviceIo.writes.toFixed(2)} writes (${costs.serviceIo.writtenBytes.toFixed(0)} B)`);
    const { latency } = m.delivery;
    if (role === "all") log(`publish -> arrival: p50 ${latency.p50?.toFixed(1)} ms, p99 ${latency.p99?.toFixed(1)} ms`);
    if (server.statementStats) log(`\n${await statementsOf(server.adminUrl, databaseUrl, messagesOf(m, role))}`);
    if (values.plain) return;
    const file = readdirSync(profiles).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no .cpuprofile written in ${profiles}`);
    log(`\n${renderProfile(summariseProfile(join(profiles, file)), costs.serviceMicros)}`);
    if (values.keep) log(`\nprofile: ${join(profiles, file)}`);
  } finally {
    killAllDispatch();
    await Promise.allSettled([receiver.helper.kill(), load.helper.kill()]);
    await server.stop();
    if (!values.keep) rmSync(profiles, { recursive: true, force: true });
  }
}

/** The messages a measurement counts its costs by. */
const messagesOf = (m: Awaited<ReturnType<typeof measure>>, role: string) => (role === "api" ? m.publish.accepted : m.delivery.distinct);

/**
 * The statements the database ran most often since it was made (start-up and
 * warm-up included), per message of the window, with the database's commits
 * and rollbacks: what each message costs in round trips.
 */
async function statementsOf(adminUrl: string, databaseUrl: string, messages: number): Promise<string> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin<{ calls: string; micros: string; query: string }[]>`
      select calls::text, (total_exec_time * 1000)::bigint::text as micros,
        regexp_replace(query, '[[:space:]]+', ' ', 'g') as query from pg_stat_statements
      where dbid = (select oid from pg_database where datname = ${name}) order by pg_stat_statements.calls desc limit 12`;
    const [xacts] = await admin<{ commits: string; rollbacks: string }[]>`
      select xact_commit::text as commits, xact_rollback::text as rollbacks from pg_stat_database where datname = ${name}`;
    const per = (n: string) => (Number(n) / Math.max(1, messages)).toFixed(3).padStart(7);
    return [
      `Database totals per message: ${per(xacts!.commits).trim()} commits, ${per(xacts!.rollbacks).trim()} rollbacks. ` +
        "Statements by calls (calls and execution µs per message):",
      ...rows.map((row) => `  ${per(row.calls)} ${per(row.micros)} µs  ${row.query.slice(0, 140)}`),
    ].join("\n");
  } finally {
    await admin.end({ timeout: 5 });
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(`bench:profile failed: ${error.stack ?? error.message}`);
    process.exit(1);
  },
);
