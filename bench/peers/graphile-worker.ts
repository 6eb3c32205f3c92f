/**
 * A webhook deliverer on graphile-worker 0.17: what a Node team would build
 * in an afternoon. Run as its own process (`node --import tsx
 * bench/peers/graphile-worker.ts`, environment as for the pipeline:
 * DATABASE_URL, DISPATCH_TOKEN, HOST, PORT), it prints `URL: <base>` once ready.
 *
 * - Publish: the runner's `addJob` per request (`graphile_worker.add_job`,
 *   one autocommit statement, which also NOTIFYs the workers).
 *   graphile-worker has a batch insert (`add_jobs`), but nothing that gathers
 *   concurrent publishes into it, so each is its own statement.
 * - Deliver: 64 concurrent jobs (a pool of 66 connections, as its
 *   documentation recommends), woken by that NOTIFY (and a 2 s poll), with
 *   the library's batching switched on as its performance guide describes:
 *   a local queue fetching and locking up to `LOCAL_QUEUE` jobs a statement,
 *   and completions and failures gathered for `BATCH_DELAY_MS` into one
 *   statement each. The task POSTs with undici and throws on anything but a
 *   2xx, so graphile-worker retries the job (`MAX_ATTEMPTS`, its exponential
 *   backoff).
 */
import { Logger, run, type Task } from "graphile-worker";
import { type Delivery, IN_FLIGHT, onStop, post, servePublishes } from "./webhook";

const TASK = "deliver";
const LOCAL_QUEUE = 2 * IN_FLIGHT;
const BATCH_DELAY_MS = 5;
const MAX_ATTEMPTS = 10;

/** graphile-worker logs every completed job at info level: only warnings and errors are kept (stderr). */
const logger = new Logger(() => (level, message) => {
  if (level === "warning" || level === "error") console.error(`graphile-worker ${level}: ${message}`);
});

const deliver: Task = async (payload, helpers) => {
  if (!(await post(payload as Delivery, helpers.job.id))) throw new Error("the receiver did not answer 2xx");
};

async function main(): Promise<void> {
  const runner = await run({
    connectionString: process.env.DATABASE_URL!,
    concurrency: IN_FLIGHT,
    // The size its documentation recommends (concurrency + 2); below concurrency it warns at every start.
    maxPoolSize: IN_FLIGHT + 2,
    noHandleSignals: true,
    logger,
    taskList: { [TASK]: deliver },
    preset: { worker: { localQueue: { size: LOCAL_QUEUE }, completeJobBatchDelay: BATCH_DELAY_MS, failJobBatchDelay: BATCH_DELAY_MS } },
  });
  const server = servePublishes(`graphile-worker webhook deliverer is running (concurrency ${IN_FLIGHT}).`, async (message) => {
    const job = await runner.addJob(TASK, message, { maxAttempts: MAX_ATTEMPTS });
    return job.id;
  });
  onStop(server, () => runner.stop());
}

main().catch((error: Error) => {
  console.error(`graphile-worker peer failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
