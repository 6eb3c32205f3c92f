/**
 * Keeps graphile-worker running through database outages. When it cannot
 * complete or fail a batch of jobs, graphile-worker shuts its worker pool down
 * ("queue is in an inconsistent state"), and the runner stops for good. The
 * supervisor notices, waits until the database answers, releases the jobs the
 * stopped pool still held locked (nothing of it runs any more) and starts a
 * new runner in the same process.
 *
 * A runner whose own connections failed during an outage is replaced too,
 * once the database is back: its pools and local job queue may hold
 * connections that died with the server and then fetch nothing more,
 * silently. A blip that graphile-worker did not see (one app connection
 * dropped) leaves it alone, so in-flight deliveries are not interrupted.
 *
 * A watchdog covers what no error reports: graphile-worker can also come out
 * of a restart of the server holding no connection at all and fetching
 * nothing, without a word. Every few seconds the supervisor looks for jobs that
 * are due and unlocked while its runner has free capacity; seen twice in a
 * row, the runner is stalled and is replaced.
 */
import { EventEmitter } from "node:events";
import { Logger, run, type Runner, type RunnerOptions } from "graphile-worker";
import type { PoolConfig } from "pg";
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import { createNodePostgresPool } from "../db/connection/drivers";
import type { Log } from "../observability/log";
import { releaseLockHolders, type Liveness } from "./liveness";

/** A supervised runner. */
export interface SupervisedRunner {
  /** Stops the current runner gracefully; no restart follows. */
  stop(): Promise<void>;
}

/** What the supervisor works with. */
export interface SupervisorDeps {
  sql: Sql;
  /** graphile-worker's node-postgres pool, on the direct connection: a new one per runner, ended once that runner has stopped. */
  pool: PoolConfig;
  availability: DatabaseAvailability;
  liveness: Liveness;
  log: Log;
}

const RESTART_DELAY_MS = 1000;
/** How long a runner being replaced may take to stop before it is killed and abandoned. */
const STOP_TIMEOUT_MS = 10_000;
/** How often the watchdog looks, and how long a due job may wait unlocked before it counts. */
const WATCHDOG_INTERVAL_MS = 5000;

/** Starts graphile-worker with `options` and restarts it whenever it stops on its own. */
export async function superviseRunner(
  options: Omit<RunnerOptions, "events" | "logger" | "pgPool" | "connectionString">,
  deps: SupervisorDeps,
): Promise<SupervisedRunner> {
  let stopping = false;
  let current: { runner: Runner; lockHolders: string[]; exited: boolean; replaced: boolean };
  let restarting: Promise<void> = Promise.resolve();
  /** Whether graphile-worker's own connections failed since the current runner started. */
  let engineSawOutage = false;
  /** While a runner is being replaced, its shutdown complaints are expected and not logged. */
  let replacing = false;
  const logger = graphileLogger(deps, () => (engineSawOutage = true), () => replacing);

  const launch = async () => {
    const events = new EventEmitter();
    const lockHolders: string[] = [];
    const register = (id: string) => {
      lockHolders.push(id);
      deps.liveness.register(id).catch((error: unknown) => deps.availability.failed(error) || deps.log(`worker: ${error}`));
    };
    events.on("pool:create", ({ workerPool }) => register(workerPool.id));
    events.on("worker:create", ({ worker }) => register(worker.workerId));
    engineSawOutage = false;
    // graphile-worker's errors on it go to `availability`, which tells a session closed while idle (reopened quietly) from an outage.
    const pgPool = createNodePostgresPool(deps.pool, (error) => void (deps.availability.failed(error) || deps.log(`graphile-worker connection: ${error.message}`)));
    const runner = await run({ ...options, pgPool, events, logger }).catch(async (error: unknown) => {
      await pgPool.end().catch(() => {});
      throw error;
    });
    const launched = { runner, lockHolders, exited: false, replaced: false };
    current = launched;
    launched.runner.promise.then(
      () => exited(launched, null),
      (error: unknown) => exited(launched, error),
    );
    // graphile-worker does not end a pool it was given: its runner's pool goes with it.
    void launched.runner.promise.catch(() => {}).finally(() => pgPool.end().catch(() => {}));
  };

  const exited = (run: typeof current, error: unknown) => {
    run.exited = true;
    if (stopping || run.replaced) return;
    deps.log(`delivery engine stopped (${error ? (error as Error).message : "no reason given"}); restarting it`);
    restarting = restarting.then(() => relaunch(run.lockHolders));
  };

  const relaunch = async (deadLockHolders: string[]) => {
    for (;;) {
      await deps.availability.whenUp();
      if (stopping) return;
      try {
        await releaseLockHolders(deps.sql, deadLockHolders);
        deps.liveness.forget(deadLockHolders);
        await launch();
        return;
      } catch (error) {
        if (!deps.availability.failed(error)) deps.log(`delivery engine restart failed: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      }
    }
  };

  /** Stops the current runner (its in-flight deliveries finish first) and starts a fresh one. */
  const replace = async () => {
    const old = current;
    if (old.exited) return;
    old.replaced = true;
    replacing = true;
    const stopped = old.runner.stop().then(
      () => true,
      (error: unknown) => {
        deps.log(`delivery engine stop failed: ${(error as Error).message}`);
        return true;
      },
    );
    const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), STOP_TIMEOUT_MS).unref());
    if (!(await Promise.race([stopped, timedOut]))) {
      // A runner stuck in its own shutdown (retrying to hand jobs back over dead connections) would block forever.
      deps.log(`delivery engine did not stop within ${STOP_TIMEOUT_MS / 1000} s; abandoning it`);
      void old.runner.kill().catch(() => {});
    }
    await relaunch(old.lockHolders);
    replacing = false;
    deps.log("delivery engine replaced", { level: "info" });
  };

  deps.availability.onRecovered(() => {
    if (!stopping && engineSawOutage) restarting = restarting.then(replace);
  });
  let suspicions = 0;
  const watchdog = setInterval(async () => {
    if (stopping || !deps.availability.up || current.exited) return;
    const concurrency = options.concurrency ?? 1;
    const stalled = await isStalled(deps.sql, current.lockHolders, concurrency).catch(() => false);
    suspicions = stalled ? suspicions + 1 : 0;
    if (suspicions < 2) return;
    suspicions = 0;
    deps.log("delivery engine stalled: due jobs wait unlocked while it has free capacity; replacing it");
    restarting = restarting.then(replace);
  }, WATCHDOG_INTERVAL_MS);
  watchdog.unref();

  await launch();
  return {
    async stop() {
      stopping = true;
      clearInterval(watchdog);
      await restarting;
      if (!current.exited) await current.runner.stop();
    },
  };
}

/**
 * True when a job has been due and unlocked for a watchdog interval while
 * the runner's lock holders hold fewer jobs than it runs at once (its local
 * queue included, so a busy runner never looks stalled).
 */
async function isStalled(sql: Sql, lockHolders: string[], concurrency: number): Promise<boolean> {
  const [row] = await sql<{ stalled: boolean }[]>`
    select exists (
        select 1 from graphile_worker.jobs
        where locked_at is null and run_at < now() - ${WATCHDOG_INTERVAL_MS} * interval '1 millisecond')
      and (select count(*) from graphile_worker.jobs where locked_by = any(${lockHolders}::text[])) < ${concurrency}
      as stalled`;
  return row?.stalled ?? false;
}

/**
 * graphile-worker's warnings and errors go to our log; its chatter does not,
 * and neither do its per-poll errors while the database is away (the outage
 * itself is logged once) nor the complaints of a runner being replaced. `onOutageError` hears of each of the latter: any
 * error it reports while the database is away.
 */
function graphileLogger(deps: SupervisorDeps, onOutageError: () => void, replacing: () => boolean): Logger {
  return new Logger(() => (level, message, meta) => {
    if (replacing()) return;
    // With the local queue, workers share a few connections; the pool-size warning assumes one each.
    if (message.includes("maxPoolSize")) return;
    // A replaced runner finishes its last batches on a pool it has ended: those jobs are released.
    if (message.includes("Cannot use a pool after calling end")) return;
    if (level !== "error" && level !== "warning") return;
    const error = (meta?.error ?? meta?.fatalError ?? new Error(message)) as unknown;
    if (deps.availability.failed(error) || !deps.availability.up) return void onOutageError();
    deps.log(`graphile-worker ${level}: ${message}`);
  });
}
