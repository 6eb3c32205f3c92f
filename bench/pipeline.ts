/**
 * The minimal pipeline: what the storage and engine shape allows on this
 * machine, with none of Dispatch's features. Run as its own process
 * (`node --import tsx bench/pipeline.ts [--no-workers]`, environment as for
 * Dispatch: DATABASE_URL, DISPATCH_TOKEN, HOST, PORT), it prints
 * `URL: <base>` once ready.
 *
 * - Publish: node:http takes `POST /v2/publish/<destination URL>` (Bearer
 *   token); concurrent requests are coalesced into one autocommit statement
 *   per batch, a multi-row INSERT of the message rows plus one `pg_notify`.
 * - Deliver: one claim loop, woken by LISTEN and a short poll, claims
 *   `created` rows with `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP
 *   LOCKED)` setting a 30 s lease, POSTs each with undici (an HS256 JWT over
 *   the body hash, like Dispatch's signature), 64 in flight, and records
 *   outcomes with one batched UPDATE per batch.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { Agent, request } from "undici";
import { readPublish } from "./publish-request";
import { sign } from "./signature";

const IN_FLIGHT = 64;
/** A claim waits for this many free delivery slots, so claims stay batches. */
const CLAIM_MIN = 16;
const POLL_MS = 50;
const CHANNEL = "bench_pipeline";

const { values } = parseArgs({ options: { "no-workers": { type: "boolean", default: false } } });
const signingKey = randomBytes(32);
const sql = postgres(process.env.DATABASE_URL!, { max: 6, onnotice: () => {} });

/** The pipeline's table, in its own schema. */
async function migrate(): Promise<void> {
  await sql`create schema if not exists pipeline`;
  await sql`create table if not exists pipeline.messages (
    id bigserial primary key,
    url text not null,
    body bytea not null,
    state text not null default 'created',
    lease_until timestamptz,
    created_at timestamptz not null default now())`;
  await sql`create index if not exists messages_created on pipeline.messages (id) where state = 'created'`;
}

interface Pending {
  url: string;
  body: Buffer;
  done: (id: string | null) => void;
}

/** Publishes waiting for the next insert batch; one batch is written at a time. */
let queued: Pending[] = [];
let writing = false;

/** Writes queued publishes as one statement, then the next batch if more came meanwhile. */
async function flushPublishes(): Promise<void> {
  if (writing || queued.length === 0) return;
  writing = true;
  const batch = queued;
  queued = [];
  try {
    const [row] = await sql<{ ids: string[] }[]>`
      with inserted as (
        insert into pipeline.messages (url, body)
        select * from unnest(${batch.map((p) => p.url)}::text[], ${sql.array(batch.map((p) => p.body), 17)}::bytea[])
        returning id)
      select array(select id::text from inserted order by id) as ids, pg_notify(${CHANNEL}, '')`;
    batch.forEach((p, i) => p.done(row!.ids[i] ?? null));
  } catch (error) {
    console.error(`publish batch failed: ${(error as Error).message}`);
    for (const p of batch) p.done(null);
  } finally {
    writing = false;
    void flushPublishes();
  }
}

/** Answers one publish request once its row is committed. */
function publish(req: IncomingMessage, res: ServerResponse): void {
  readPublish(req, res, ({ url, body, answer }) => {
    queued.push({ url, body, done: answer });
    void flushPublishes();
  });
}

interface Claimed {
  id: string;
  url: string;
  body: Buffer;
}

const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 30_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
let inFlight = 0;
/** Outcomes waiting for the next batched UPDATE; one is written at a time. */
let outcomes: { id: string; state: string }[] = [];
let recording = false;
/** Set by a NOTIFY or a freed slot; the claim loop sleeps (at most `POLL_MS`) only while it is unset. */
let woken = false;
let wakeUp: () => void = () => {};
const wake = () => {
  woken = true;
  wakeUp();
};

/** Claims up to `n` created rows, leasing them for 30 s. */
function claim(n: number): Promise<Claimed[]> {
  return sql<Claimed[]>`
    update pipeline.messages set state = 'active', lease_until = now() + interval '30 s'
    where id in (select id from pipeline.messages where state = 'created' order by id limit ${n} for update skip locked)
    returning id::text, url, body`;
}

/** POSTs one claimed message and queues its outcome. */
async function deliver(message: Claimed): Promise<void> {
  let state = "failed";
  try {
    const response = await request(message.url, {
      method: "POST",
      headers: { "content-type": "application/json", "svc-message-id": message.id, "svc-signature": sign(signingKey, message.url, message.body) },
      body: message.body,
      dispatcher: agent,
    });
    await response.body.dump();
    if (response.statusCode >= 200 && response.statusCode < 300) state = "delivered";
  } catch {
    // A failed attempt is recorded as failed; the pipeline does not retry.
  }
  outcomes.push({ id: message.id, state });
  inFlight--;
  void recordOutcomes();
  wake();
}

/** Writes queued outcomes as one UPDATE, then the next batch if more came meanwhile. */
async function recordOutcomes(): Promise<void> {
  if (recording || outcomes.length === 0) return;
  recording = true;
  const batch = outcomes;
  outcomes = [];
  try {
    await sql`
      update pipeline.messages m set state = o.state, lease_until = null
      from unnest(${batch.map((o) => o.id)}::bigint[], ${batch.map((o) => o.state)}::text[]) as o(id, state)
      where m.id = o.id`;
  } catch (error) {
    console.error(`outcome batch failed: ${(error as Error).message}`);
  } finally {
    recording = false;
    void recordOutcomes();
  }
}

/** Claims and delivers until the process ends. */
async function claimLoop(): Promise<void> {
  for (;;) {
    const free = IN_FLIGHT - inFlight;
    const rows = free >= Math.min(CLAIM_MIN, IN_FLIGHT) ? await claim(free).catch(() => []) : [];
    inFlight += rows.length;
    for (const row of rows) void deliver(row);
    if (!woken) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wakeUp = () => (clearTimeout(timer), resolve());
      });
      wakeUp = () => {};
    }
    woken = false;
  }
}

async function main(): Promise<void> {
  await migrate();
  if (!values["no-workers"]) {
    await sql.listen(CHANNEL, () => wake());
    void claimLoop();
  }
  const server = createServer(publish);
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    console.log(`Minimal pipeline is running (workers: ${values["no-workers"] ? "off" : IN_FLIGHT}).\nURL: http://127.0.0.1:${port}`);
  });
  process.once("SIGTERM", () => {
    server.close();
    void sql.end({ timeout: 2 }).finally(() => process.exit(0));
  });
}

main().catch((error: Error) => {
  console.error(`pipeline failed: ${error.stack ?? error.message}`);
  process.exit(1);
});
