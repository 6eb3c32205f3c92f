/**
 * `npm run bench [-- [--quick] [--only <part>[,<part>...]]]`: measures Dispatch as it is in src/.
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
 *
 * `--only` (for development) runs the named parts alone (bench/parts.ts,
 * e.g. `--only noisy`); such a run prints its tables and writes only
 * bench/results/<timestamp>-only-<parts>.json.
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { type DatabaseServer, startDatabaseServer } from "./database";
import { killAllDispatch } from "./dispatch";
import { type Helper, startHelper } from "./ipc";
import { type Measured, PARTS } from "./parts";
import { checkTargets, renderReport, writeReport, type BenchRun } from "./report";
import type { BenchContext, Plan } from "./scenarios";

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

/** The run is abandoned (children killed, exit 1) past this. */
// A full run took 15 min before the peers, the paired 2a and the search for the rate at the bound (about 15 more).
const WATCHDOG_MS = { full: 50 * 60_000, quick: 12 * 60_000 };

const began = Date.now();
/** Progress lines carry the seconds since the run began. */
const log = (line: string) => console.log(`[${((Date.now() - began) / 1000).toFixed(1).padStart(5)} s] ${line}`);

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, only: { type: "string", multiple: true } } });
  const plan = values.quick ? QUICK : FULL;
  const only = values.only ? partsNamed(values.only) : null;
  const args = [...(values.quick ? ["--quick"] : []), ...(only ? [`--only ${only.join(",")}`] : [])];
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
    log(`Dispatch benchmark (${plan.quick ? "quick" : "full"} mode${only ? `; only ${only.join(", ")}` : ""})`);
    const [server, receiverStart, loadStart] = await Promise.all([
      startDatabaseServer(process.env.DATABASE_URL).then((server) => (cleanup.server = server)),
      startHelper<{ url: string }>("./receiver.ts").then((started) => (cleanup.helpers.push(started.helper), started)),
      startHelper<boolean>("./load.ts").then((started) => (cleanup.helpers.push(started.helper), started)),
    ]);
    const load = loadStart.helper;
    log(`Postgres: ${server.version.split(",")[0]} (${server.embedded ? "embedded" : "DATABASE_URL"})`);
    const ctx: BenchContext = { server, receiver: receiverStart.helper, receiverUrl: receiverStart.ready.url, load, plan, log };

    const measured: Measured = { scenarios: [], paired: [] };
    for (const [name, part] of Object.entries(PARTS)) if (only === null || only.includes(name)) await part(ctx, measured);

    const run: BenchRun = {
      command: `npm run bench${args.length > 0 ? ` -- ${args.join(" ")}` : ""}`,
      only,
      startedAt: startedAt.toISOString(),
      durationMs: Date.now() - startedAt.getTime(),
      plan,
      postgres: { version: server.version, embedded: server.embedded, settings: server.settings },
      loadAverage: { start: loadBefore, end: loadavg() },
      ...measured,
      scenarios: measured.scenarios.sort((a, b) => a.id.localeCompare(b.id)),
    };
    const checks = checkTargets(run);
    const markdown = renderReport(run, checks);
    const file = writeReport(run, checks, markdown);
    console.log(`\n${markdown}`);
    log(`Wrote ${file}${only ? "" : ", bench/results/latest.json and bench/RESULTS.md"} (${(run.durationMs / 1000).toFixed(0)} s).`);
    return 0;
  } finally {
    clearTimeout(watchdog);
    await cleanup.run();
  }
}

/** The parts `--only` names (comma-separated, or the option given again), in a full run's order. */
function partsNamed(lists: string[]): string[] {
  const names = lists.flatMap((list) => list.split(",")).map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !Object.hasOwn(PARTS, name));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`--only: ${unknown.length > 0 ? `unknown part ${unknown.join(", ")}` : "no part named"}; the parts are ${Object.keys(PARTS).join(", ")}`);
  }
  return Object.keys(PARTS).filter((name) => names.includes(name));
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
