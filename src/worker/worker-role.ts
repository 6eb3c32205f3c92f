/**
 * The worker role: the delivery engine's claim loop, the schedules' loop, graphile-worker for
 * timed jobs (workflow wait timeouts, maintenance; supervised, so a database
 * outage cannot stop it for good), and the liveness heartbeat that lets other
 * processes recover this one's claims and jobs.
 */
import { type Config, llmUrl } from "../config/config";
import type { DatabaseAvailability } from "../db/availability";
import type { Listener, Sql } from "../db/client";
import { TIMED_JOB_CONNECTIONS } from "../db/connection/budget";
import { nodePostgresConfig } from "../db/connection/drivers";
import type { Endpoint } from "../db/connection/transport";
import { SigningKeyCache } from "../domain/delivery/signing-key-cache";
import type { SigningKeySource } from "../domain/delivery/signing-keys";
import { messageSettings } from "../domain/publish/options";
import { circuitSettings } from "../domain/destinations/circuit";
import type { Log } from "../observability/log";
import type { Metrics } from "../observability/metrics";
import type { Tracing } from "../observability/tracing";
import type { DestinationGuard } from "../outbound/destination-guard";
import type { HttpClient } from "../outbound/http-client";
import type { LocalDelivery } from "../domain/publish/local-delivery";
import { Claimer } from "./claimer";
import { DestinationHealth } from "./destination-health";
import { DestinationSlots } from "./destination-slots";
import { DlqWatch } from "./dlq-watch";
import type { DeliverDeps } from "./deliver";
import { Liveness } from "./liveness";
import { Recorder } from "./recorder";
import { Scheduler } from "./scheduler";
import { TimedJobsSupervisor } from "./timed-jobs/supervisor";
import { CRONTAB, timedJobTasks } from "./timed-jobs/tasks";

/** A running worker. */
export interface WorkerHandle {
  /** The id its claim loop beats its heartbeat under (`dispatch.workers`). */
  heartbeatId: string;
  /** Its claim loop, which takes messages this process publishes (domain/publish/local-delivery.ts). */
  local: LocalDelivery;
  stop(): Promise<void>;
}

/** What the worker needs from the process. */
export interface WorkerDeps {
  config: Config;
  /** The direct connection graphile-worker runs on (connection/endpoints.ts). */
  direct: Endpoint;
  sql: Sql;
  /** Where the claim loop, the schedules' loop and the key cache LISTEN. */
  listener: Listener;
  http: HttpClient;
  /** The SSRF guard `http` enforces; schedules' destinations are checked against it as they fire. */
  guard: DestinationGuard;
  /** Where the signing keys come from (configured, or stored and sealed). */
  keySource: SigningKeySource;
  availability: DatabaseAvailability;
  log: Log;
  /** The clock schedules fire by; tests move it on. */
  now?: () => number;
  metrics: Metrics;
  /** OpenTelemetry spans of the attempts (off: `NO_TRACING`). */
  tracing: Tracing;
  /** Whether the tables are distributed over a Citus cluster (db/citus/layout.ts). */
  distributed: boolean;
}

/** graphile-worker runs only timed jobs now (wait timeouts, maintenance): two at once is plenty. */
const TIMED_JOB_CONCURRENCY = 2;
/** How often graphile-worker looks for timed jobs that came due: how late a wait timeout may fire. */
const TIMED_JOB_POLL_MS = 500;
/** How long a stopping worker lets attempts in flight finish before it cuts them short and hands them back. */
const STOP_GRACE_MS = 5000;

/** Starts the claim loop, graphile-worker with Dispatch's timed tasks, and the liveness heartbeat. */
export async function startWorker(deps: WorkerDeps): Promise<WorkerHandle> {
  const { config, sql, availability } = deps;
  // An outage is logged once by `availability`; anything else is logged as it comes.
  const onError = (error: unknown) => void (availability.failed(error) || deps.log(`worker: ${(error as Error).message}`));
  const publishSettings = messageSettings(config);
  const circuits = circuitSettings(config, publishSettings);
  const outcomeSettings = { ...publishSettings, circuits };
  const slots = new DestinationSlots(config.workerConcurrency, config.destinationShare);
  const health = new DestinationHealth({
    sql,
    availability,
    settings: circuits,
    intervalMs: config.heartbeatIntervalMs,
    probeTimeouts: { defaultMs: config.defaultTimeoutMs, graceMs: config.workerDeadAfterMs },
    distributed: deps.distributed,
    metrics: deps.metrics,
    log: deps.log,
  });
  deps.metrics.countSlotsWith(() => slotsByCircuit(slots, health));
  const dlqWatch = new DlqWatch({
    sql,
    availability,
    threshold: config.operatorDlqThreshold,
    events: circuits.events,
    intervalMs: config.heartbeatIntervalMs,
    log: deps.log,
  });
  const recorder = new Recorder(
    sql,
    availability,
    outcomeSettings,
    deps.log,
    deps.metrics.outcomeBatchFallbacks,
    (changes) => {
      for (const change of changes) health.changed(change.destination, change.to, change.reason);
    },
    deps.distributed,
  );
  const liveness = new Liveness(
    sql,
    config.heartbeatIntervalMs,
    config.workerDeadAfterMs,
    onError,
    () => recorder.flushReleased(),
    deps.distributed,
  );
  const keys = new SigningKeyCache(sql, deps.listener, deps.keySource);
  await keys.start();
  const shutdown = new AbortController();
  const deliverDeps: DeliverDeps = {
    sql,
    http: deps.http,
    signingKeys: (project) => keys.get(project),
    retrying: (operation) => availability.retrying(operation),
    defaultTimeoutMs: config.defaultTimeoutMs,
    retryDelayScale: config.retryDelayScale,
    llmApiKey: config.llmApiKey,
    shutdown: shutdown.signal,
    unreachable: (destination) => health.unreachable(destination),
    tracing: deps.tracing,
  };
  const claimer = new Claimer({
    sql,
    listener: deps.listener,
    availability,
    recorder,
    deliver: deliverDeps,
    slots,
    health,
    failedForGood: () => dlqWatch.failed(),
    workerId: `${liveness.processId}:claims`,
    distributed: deps.distributed,
    concurrency: config.workerConcurrency,
    pollIntervalMs: config.pollIntervalMs,
    idlePollIntervalMs: config.idlePollIntervalMs,
    metrics: deps.metrics,
    log: deps.log,
  });
  await liveness.register(`${liveness.processId}:claims`);
  const timedJobs = await TimedJobsSupervisor.start(
    {
      concurrency: TIMED_JOB_CONCURRENCY,
      noHandleSignals: true,
      preset: {
        worker: {
          pollInterval: Math.max(config.pollIntervalMs, TIMED_JOB_POLL_MS),
          // Jobs come through a local queue: the path whose behaviour through database outages
          // the supervisor is built and tested for (without it, a worker whose fetch fails
          // during an outage exits and graphile-worker prints a stack trace to the console).
          localQueue: { size: TIMED_JOB_CONCURRENCY * 2 },
          completeJobBatchDelay: 5,
          failJobBatchDelay: 5,
        },
      },
      taskList: timedJobTasks({ sql, config, log: deps.log, availability, settings: outcomeSettings }),
      crontab: CRONTAB,
    },
    { sql, pool: nodePostgresConfig(deps.direct, TIMED_JOB_CONNECTIONS), availability, liveness, log: deps.log },
  );
  const scheduler = new Scheduler({
    sql,
    listener: deps.listener,
    availability,
    settings: { ...outcomeSettings, llmUrl: llmUrl(config), guard: deps.guard },
    distributed: deps.distributed,
    now: deps.now ?? Date.now,
    metrics: deps.metrics,
    log: deps.log,
  });
  liveness.start();
  await health.start();
  dlqWatch.start();
  await claimer.start();
  await scheduler.start();
  return {
    heartbeatId: `${liveness.processId}:claims`,
    local: claimer,
    async stop() {
      const grace = setTimeout(() => {
        shutdown.abort();
        deps.http.abortInFlight(new Error("the worker stopped before the destination answered"));
      }, STOP_GRACE_MS);
      await scheduler.stop();
      await claimer.stop();
      clearTimeout(grace);
      await health.stop();
      await dlqWatch.stop();
      await recorder.flushReleased().catch(onError);
      await keys.stop();
      await timedJobs.stop();
      await liveness.stop();
    },
  };
}

/** This worker's requests in flight, by their destination's circuit state. */
function* slotsByCircuit(slots: DestinationSlots, health: DestinationHealth): Iterable<[string, number]> {
  for (const [destination, n] of slots.busy()) yield [health.circuitOf(destination), n];
}
