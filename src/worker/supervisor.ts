/**
 * Keeps graphile-worker running through database outages. When it cannot
 * complete or fail a batch of jobs, graphile-worker shuts its worker pool down
 * ("queue is in an inconsistent state"), and the runner stops for good. The
 * supervisor notices, waits until the database answers, releases the jobs the
 * stopped pool still held locked (nothing of it runs any more) and starts a
 * new runner in the same process.
 *
 * A runner that lived through an outage is replaced too, once the database is
 * back: its pools and local job queue may hold connections that died with the
 * server and then fetch nothing more, silently. Replacing it is cheap and
 * leaves no such state behind.
 */
import { EventEmitter } from "node:events";
import { run, type Runner, type RunnerOptions } from "graphile-worker";
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import { releaseLockHolders, type Liveness } from "./liveness";

/** A supervised runner. */
export interface SupervisedRunner {
  /** Stops the current runner gracefully; no restart follows. */
  stop(): Promise<void>;
}

/** What the supervisor works with. */
export interface SupervisorDeps {
  sql: Sql;
  availability: DatabaseAvailability;
  liveness: Liveness;
  log: (message: string) => void;
}

const RESTART_DELAY_MS = 1000;

/** Starts graphile-worker with `options` and restarts it whenever it stops on its own. */
export async function superviseRunner(options: RunnerOptions, deps: SupervisorDeps): Promise<SupervisedRunner> {
  let stopping = false;
  let current: { runner: Runner; lockHolders: string[]; exited: boolean; replaced: boolean };
  let restarting: Promise<void> = Promise.resolve();

  const launch = async () => {
    const events = new EventEmitter();
    const lockHolders: string[] = [];
    const register = (id: string) => {
      lockHolders.push(id);
      deps.liveness.register(id).catch((error: unknown) => deps.availability.failed(error) || deps.log(`worker: ${error}`));
    };
    events.on("pool:create", ({ workerPool }) => register(workerPool.id));
    events.on("worker:create", ({ worker }) => register(worker.workerId));
    const launched = { runner: await run({ ...options, events }), lockHolders, exited: false, replaced: false };
    current = launched;
    launched.runner.promise.then(
      () => exited(launched, null),
      (error: unknown) => exited(launched, error),
    );
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
    await old.runner.stop().catch((error: unknown) => deps.log(`delivery engine stop failed: ${(error as Error).message}`));
    await relaunch(old.lockHolders);
  };

  deps.availability.onRecovered(() => {
    if (!stopping) restarting = restarting.then(replace);
  });
  await launch();
  return {
    async stop() {
      stopping = true;
      await restarting;
      if (!current.exited) await current.runner.stop();
    },
  };
}
