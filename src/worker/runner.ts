/**
 * The worker role: graphile-worker running Dispatch's tasks (supervised, so a
 * database outage cannot stop it for good), plus the liveness heartbeat that
 * lets other processes recover this one's jobs.
 */
import type { Config } from "../config";
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import type { HttpClient } from "../delivery/http-client";
import { BatchLoader } from "../db/batch-loader";
import { Coalescer } from "../db/coalescer";
import { purgeExpiredDeduplicationKeys } from "../domain/deduplication";
import type { StoredMessage } from "../domain/delivery/attempt";
import { type AttemptRecord, recordOutcomes } from "../domain/delivery/outcome";
import { DELIVER_TASK, WAIT_TIMEOUT_TASK } from "../domain/delivery/schedule";
import { findMessages } from "../domain/messages";
import { fireWaitTimeout } from "../domain/workflows/waits";
import { readSigningKeys } from "../domain/settings";
import type { SigningKeys } from "../domain/signing";
import { Liveness } from "./liveness";
import { startPromoter } from "./promoter";
import { superviseRunner } from "./supervisor";
import { deliverTask } from "./tasks/deliver";

/** A running worker. */
export interface WorkerHandle {
  stop(): Promise<void>;
}

/** What the worker needs from the process. */
export interface WorkerDeps {
  config: Config;
  databaseUrl: string;
  sql: Sql;
  http: HttpClient;
  availability: DatabaseAvailability;
  log: (message: string) => void;
}

const MAINTENANCE_TASK = "maintenance";

/** Starts graphile-worker with Dispatch's tasks and the liveness heartbeat. */
export async function startWorker(deps: WorkerDeps): Promise<WorkerHandle> {
  const { config, sql, availability } = deps;
  // An outage is logged once by `availability`; anything else is logged as it comes.
  const onError = (error: unknown) => void (availability.failed(error) || deps.log(`worker: ${(error as Error).message}`));
  const liveness = new Liveness(sql, config.heartbeatIntervalMs, config.workerDeadAfterMs, onError);
  const messages = new BatchLoader<string, StoredMessage>(
    async (ids) => new Map((await findMessages(sql, ids)).map((message) => [message.id, message])),
  );
  const outcomeSettings = { limits: config, deduplicationWindowMs: config.deduplicationWindowMs };
  const outcomes = new Coalescer<AttemptRecord, void>(
    sql,
    (tx, records) => recordOutcomes(tx, records, outcomeSettings),
    { maxBatch: 500, maxConcurrent: 4 },
  );
  const runner = await superviseRunner(
    {
      connectionString: deps.databaseUrl,
      concurrency: config.workerConcurrency,
      maxPoolSize: 10,
      noHandleSignals: true,
      preset: {
        worker: {
          // Poll often: a due delayed job is otherwise found only by polling (PERFORMANCE.md trap 2).
          pollInterval: config.pollIntervalMs,
          // Fetch and complete jobs in batches (PERFORMANCE.md, "same with localQueue").
          localQueue: { size: config.workerConcurrency * 2 },
          completeJobBatchDelay: 5,
          failJobBatchDelay: 5,
        },
      },
      taskList: {
        [DELIVER_TASK]: deliverTask({
          sql,
          http: deps.http,
          // A delivery waits out an outage rather than fail its job: reading is cheap to
          // repeat, and recording must not be lost once the destination has the message.
          loadMessage: (id) => availability.retrying(() => messages.get(id)),
          recordOutcome: (record) => availability.retrying(() => outcomes.submit(record)),
          signingKeys: cachedSigningKeys(sql),
          defaultTimeoutMs: config.defaultTimeoutMs,
          retryDelayScale: config.retryDelayScale,
          llmApiKey: config.llmApiKey,
        }),
        [MAINTENANCE_TASK]: async () => void (await purgeExpiredDeduplicationKeys(sql)),
        [WAIT_TIMEOUT_TASK]: async (payload) => {
          const { waiterId } = payload as { waiterId: number };
          await sql.begin((tx) => fireWaitTimeout(tx, waiterId, outcomeSettings));
        },
      },
      crontab: `*/5 * * * * ${MAINTENANCE_TASK}`,
    },
    { sql, availability, liveness, log: deps.log },
  );
  liveness.start();
  const stopPromoter = startPromoter(sql, onError);
  return {
    async stop() {
      await stopPromoter();
      await runner.stop();
      await liveness.stop();
    },
  };
}

/** Signing keys, re-read at most once a second so a rotation reaches every worker quickly. */
function cachedSigningKeys(sql: Sql): () => Promise<SigningKeys> {
  let cached: { keys: SigningKeys; at: number } | null = null;
  return async () => {
    if (cached && Date.now() - cached.at < 1000) return cached.keys;
    cached = { keys: await readSigningKeys(sql), at: Date.now() };
    return cached.keys;
  };
}
