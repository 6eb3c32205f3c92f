/**
 * Keeps the timed jobs (graphile-worker: workflow wait timeouts, maintenance)
 * running through database outages. When graphile-worker cannot complete or
 * fail a batch of jobs, it shuts its worker pool down ("queue is in an
 * inconsistent state") and stops for good. The supervisor notices, waits until
 * the database answers, releases the jobs the stopped pool still held locked
 * (nothing of it runs any more) and starts a new runner in the same process.
 *
 * A runner whose own connections failed during an outage is replaced too,
 * once the database is back: its pool and local job queue may hold
 * connections that died with the server and then fetch nothing more,
 * silently. A session closed while idle (availability.ts tells it from an
 * outage) leaves it alone.
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
import type { DatabaseAvailability } from "../../db/availability";
import type { Sql } from "../../db/client";
import { createNodePostgresPool } from "../../db/connection/drivers";
import type { Log } from "../../observability/log";
import { type Liveness, releaseLockHolders } from "../liveness";

/** What the supervisor works with. */
export interface SupervisorDeps {
  sql: Sql;
  /** graphile-worker's node-postgres pool, on the direct connection: a new one per runner, ended once that runner has stopped. */
  pool: PoolConfig;
  availability: DatabaseAvailability;
  liveness: Liveness;
  log: Log;
}

/** The runner's options the supervisor passes on (it supplies events, logger and pool itself). */
export type TimedJobOptions = Omit<RunnerOptions, "events" | "logger" | "pgPool" | "connectionString">;

/** One graphile-worker runner, and what it holds. */
interface Launched {
  runner: Runner;
  /** The worker pool and worker ids its jobs are locked by (registered with liveness). */
  lockHolders: string[];
  exited: boolean;
  replaced: boolean;
}

const RESTART_DELAY_MS = 1000;
/** How long a runner being replaced may take to stop before it is killed and abandoned. */
const STOP_TIMEOUT_MS = 10_000;
/** How often the watchdog looks, and how long a due job may wait unlocked before it counts. */
const WATCHDOG_INTERVAL_MS = 5000;
/** What the log calls what this supervises. */
const NAME = "timed jobs (graphile-worker)";

/** graphile-worker, started with `options`, and restarted whenever it stops on its own. */
export class TimedJobsSupervisor {
  private current!: Launched;
  private stopping = false;
  private restarting: Promise<void> = Promise.resolve();
  /** Whether graphile-worker's own connections failed in an outage since the current runner started. */
  private sawOutage = false;
  /** While a runner is being replaced, its shutdown complaints are expected and not logged. */
  private replacing = false;
  private suspicions = 0;
  private readonly watchdog: NodeJS.Timeout;
  private readonly logger: Logger;

  private constructor(
    private readonly options: TimedJobOptions,
    private readonly deps: SupervisorDeps,
  ) {
    this.logger = graphileLogger(deps, () => (this.sawOutage = true), () => this.replacing);
    deps.availability.onRecovered(() => {
      if (!this.stopping && this.sawOutage) this.schedule(() => this.replace());
    });
    this.watchdog = setInterval(() => void this.watch(), WATCHDOG_INTERVAL_MS);
    this.watchdog.unref();
  }

  /** Starts the first runner. */
  static async start(options: TimedJobOptions, deps: SupervisorDeps): Promise<TimedJobsSupervisor> {
    const supervisor = new TimedJobsSupervisor(options, deps);
    try {
      await supervisor.launch();
    } catch (error) {
      clearInterval(supervisor.watchdog);
      throw error;
    }
    return supervisor;
  }

  /** Stops the current runner gracefully; no restart follows. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.watchdog);
    await this.restarting;
    if (!this.current.exited) await this.current.runner.stop();
  }

  private schedule(step: () => Promise<void>): void {
    this.restarting = this.restarting.then(step);
  }

  private async launch(): Promise<void> {
    const { deps } = this;
    const events = new EventEmitter();
    const lockHolders: string[] = [];
    const register = (id: string) => {
      lockHolders.push(id);
      deps.liveness.register(id).catch((error: unknown) => deps.availability.failed(error) || deps.log(`worker: ${error}`));
    };
    events.on("pool:create", ({ workerPool }) => register(workerPool.id));
    events.on("worker:create", ({ worker }) => register(worker.workerId));
    this.sawOutage = false;
    // Its errors go to `availability`, which tells a session closed while idle (reopened quietly) from an outage.
    const onError = (error: Error) => void (deps.availability.failed(error) || deps.log(`graphile-worker connection: ${error.message}`));
    const pgPool = createNodePostgresPool(deps.pool, onError);
    const runner = await run({ ...this.options, pgPool, events, logger: this.logger }).catch(async (error: unknown) => {
      await pgPool.end().catch(() => {});
      throw error;
    });
    const launched: Launched = { runner, lockHolders, exited: false, replaced: false };
    this.current = launched;
    runner.promise.then(
      () => this.exited(launched, null),
      (error: unknown) => this.exited(launched, error),
    );
    // graphile-worker does not end a pool it was given: its runner's pool goes with it.
    void runner.promise.catch(() => {}).finally(() => pgPool.end().catch(() => {}));
  }

  private exited(launched: Launched, error: unknown): void {
    launched.exited = true;
    if (this.stopping || launched.replaced) return;
    this.deps.log(`${NAME} stopped (${error ? (error as Error).message : "no reason given"}); restarting them`);
    this.schedule(() => this.relaunch(launched.lockHolders));
  }

  /** Releases what a stopped runner held and starts a new one, waiting out the database's absence. */
  private async relaunch(deadLockHolders: string[]): Promise<void> {
    const { deps } = this;
    for (;;) {
      await deps.availability.whenUp();
      if (this.stopping) return;
      try {
        await releaseLockHolders(deps.sql, deadLockHolders);
        deps.liveness.forget(deadLockHolders);
        await this.launch();
        return;
      } catch (error) {
        if (!deps.availability.failed(error)) deps.log(`${NAME} restart failed: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      }
    }
  }

  /** Stops the current runner (its jobs in flight finish first) and starts a fresh one. */
  private async replace(): Promise<void> {
    const old = this.current;
    if (old.exited) return;
    old.replaced = true;
    this.replacing = true;
    const stopped = old.runner.stop().then(
      () => true,
      (error: unknown) => {
        this.deps.log(`${NAME} stop failed: ${(error as Error).message}`);
        return true;
      },
    );
    const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), STOP_TIMEOUT_MS).unref());
    if (!(await Promise.race([stopped, timedOut]))) {
      // A runner stuck in its own shutdown (retrying to hand jobs back over dead connections) would block forever.
      this.deps.log(`${NAME} did not stop within ${STOP_TIMEOUT_MS / 1000} s; abandoning the runner`);
      void old.runner.kill().catch(() => {});
    }
    await this.relaunch(old.lockHolders);
    this.replacing = false;
    this.deps.log(`${NAME} replaced`, { level: "info" });
  }

  /** The watchdog's look: twice stalled in a row, the runner is replaced. */
  private async watch(): Promise<void> {
    if (this.stopping || !this.deps.availability.up || this.current.exited) return;
    const stalled = await isStalled(this.deps.sql, this.current.lockHolders, this.options.concurrency ?? 1).catch(() => false);
    this.suspicions = stalled ? this.suspicions + 1 : 0;
    if (this.suspicions < 2) return;
    this.suspicions = 0;
    this.deps.log(`${NAME} stalled: due jobs wait unlocked while the runner has free capacity; replacing it`);
    this.schedule(() => this.replace());
  }
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
 * itself is logged once) nor the complaints of a runner being replaced.
 * `onOutageError` hears of each error it reports while the database is away.
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
