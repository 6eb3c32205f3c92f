/**
 * A webhook deliverer on pg-boss 10 (the last major that runs on Node 20):
 * what a Node team would build in an afternoon. Run as its own process
 * (`node --import tsx bench/peers/pg-boss.ts`, environment as for the
 * pipeline: DATABASE_URL, DISPATCH_TOKEN, HOST, PORT), it prints
 * `URL: <base>` once ready.
 *
 * - Publish: `boss.send` per request, the library's single-job insert (one
 *   autocommit INSERT ... SELECT joined with the queue's row). pg-boss also
 *   has a batch insert (`boss.insert(jobs)`), but nothing that gathers
 *   concurrent sends into it: a server answering each publish once stored has
 *   one job in hand, so each is its own statement.
 * - Deliver: `WORKERS` workers (`boss.work`), each fetching up to `BATCH`
 *   jobs in one statement (SKIP LOCKED, state `active`), so up to 64 requests
 *   are in flight; each job is POSTed with undici. The failed ones are failed
 *   with `boss.fail` (one statement; the queue's `retryLimit` and
 *   `retryDelay` retry them), and pg-boss completes the rest of the batch in
 *   one statement when the handler returns.
 * - Wake-ups: pg-boss 10 has no LISTEN; a worker polls at most every
 *   `pollingIntervalSeconds` (0.5 s at least) unless `notifyWorker` is called.
 *   A publish notifies every worker, and a worker that got a full batch
 *   notifies them too, so a busy queue is fetched without waiting for the poll.
 */
import PgBoss from "pg-boss";
import { type Delivery, IN_FLIGHT, onStop, post, servePublishes } from "./webhook";

const QUEUE = "deliver";
const BATCH = 16;
const WORKERS = IN_FLIGHT / BATCH;

const boss = new PgBoss({ connectionString: process.env.DATABASE_URL!, application_name: "bench-pg-boss" });
boss.on("error", (error) => console.error(`pg-boss: ${error.message}`));
const workers: string[] = [];
const wakeWorkers = () => workers.forEach((id) => boss.notifyWorker(id));

/** Stores one published message as a job. */
async function send(message: Delivery): Promise<string> {
  const id = await boss.send(QUEUE, message);
  if (id === null) throw new Error("pg-boss stored no job");
  wakeWorkers();
  return id;
}

/** POSTs a fetched batch; fails the jobs whose receiver did not answer 2xx, and pg-boss completes the others. */
async function deliverBatch(jobs: PgBoss.Job<Delivery>[]): Promise<void> {
  const delivered = await Promise.all(jobs.map((job) => post(job.data, job.id)));
  const failed = jobs.filter((_, i) => !delivered[i]).map((job) => job.id);
  if (failed.length > 0) await boss.fail(QUEUE, failed);
  if (jobs.length === BATCH) wakeWorkers();
}

async function main(): Promise<void> {
  await boss.start();
  await boss.createQueue(QUEUE, { name: QUEUE, retryLimit: 10, retryDelay: 1, expireInSeconds: 30 });
  for (let i = 0; i < WORKERS; i++) {
    workers.push(await boss.work<Delivery>(QUEUE, { batchSize: BATCH, pollingIntervalSeconds: 0.5 }, deliverBatch));
  }
  const server = servePublishes(`pg-boss webhook deliverer is running (${WORKERS} workers × ${BATCH} jobs).`, send);
  onStop(server, () => boss.stop({ graceful: true, timeout: 5_000 }));
}

main().catch((error: Error) => {
  console.error(`pg-boss peer failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
