/**
 * Scenario 2f, fairness between projects: project `backlog` publishes
 * `BACKLOG` messages (to eight receivers on 127.0.0.1 that answer after
 * 100 ms, so the backlog takes minutes to drain), then the default project
 * publishes `FRESH` messages to a receiver of their own. The figure is how
 * long each of those took from its publish's answer to its arrival; the
 * target (issue 37) is that the last arrives within `BOUND_MS`. The backlog
 * still waiting when they have arrived shows they went beside it, not after
 * it. Dispatch runs as the bench starts it (`--role all`), on a fresh database.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import postgres from "postgres";
import { request } from "undici";
import { ACCESS_TOKENS_CHANNEL, tokenDigest } from "../src/domain/access-tokens/access-tokens";
import { PENDING_STATES } from "../src/db/vocabulary";
import type { DispatchProcess } from "./dispatch";
import { type BenchContext, withDispatch } from "./scenarios";
import { percentiles, type Percentiles, sleep } from "./stats";

/** Messages the busy project has due before the other publishes (`BENCH_FAIRNESS_BACKLOG` sets another). */
const BACKLOG = Number(process.env.BENCH_FAIRNESS_BACKLOG ?? 100_000);
/** The other project's new messages. */
const FRESH = 20;
/** Issue 37's bound on their wait, ms. */
export const BOUND_MS = 2_000;
const SLOW_RECEIVERS = 8;
const SLOW_ANSWER_MS = 100;
const BATCH_ITEMS = 1_000;
const BATCHES_IN_FLIGHT = 2;
/** Longest wait for the fresh messages to arrive, ms. */
const WAIT_MS = 60_000;

/** What 2f measured. */
export interface FairnessRun {
  backlog: number;
  fresh: number;
  boundMs: number;
  /** Publishing the backlog, ms. */
  publishMs: number;
  /** The busy project's messages not yet delivered when the fresh ones were published, and when the last of them arrived. */
  waitingAtPublish: number;
  waitingAtEnd: number;
  /** Fresh messages that arrived within `WAIT_MS`. */
  arrived: number;
  /** Publish answered → arrival, ms, of those that arrived. */
  latency: Percentiles;
}

/** Runs 2f on a fresh database. */
export async function fairness(ctx: BenchContext): Promise<FairnessRun> {
  const slow = await Promise.all(Array.from({ length: SLOW_RECEIVERS }, () => startReceiver(SLOW_ANSWER_MS)));
  const fresh = await startReceiver(0);
  try {
    return await withDispatch(ctx, "fairness", async (dispatch, databaseUrl) => {
      const busy = await makeProject(databaseUrl, "backlog");
      const started = performance.now();
      await publishBacklog(dispatch, busy, slow);
      const publishMs = performance.now() - started;
      const waitingAtPublish = await waiting(databaseUrl);
      const sentAt = new Map<string, number>();
      for (let i = 0; i < FRESH; i++) {
        await post(dispatch, dispatch.token, `/v2/publish/${fresh.url}/fresh-${i}`, "fresh");
        sentAt.set(`/fresh-${i}`, performance.now());
      }
      const deadline = performance.now() + WAIT_MS;
      while (fresh.arrivals.size < FRESH && performance.now() < deadline) await sleep(20);
      const waitingAtEnd = await waiting(databaseUrl);
      const latency = [...fresh.arrivals].map(([path, at]) => at - sentAt.get(path)!);
      return { backlog: BACKLOG, fresh: FRESH, boundMs: BOUND_MS, publishMs, waitingAtPublish, waitingAtEnd, arrived: latency.length, latency: percentiles(latency) };
    });
  } finally {
    await Promise.all([...slow, fresh].map((receiver) => receiver.close()));
  }
}

/** Project `name` with a full token (as `dispatch project create` makes them); returns the token. */
async function makeProject(databaseUrl: string, name: string): Promise<string> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const token = `bench_${name}_0123456789abcdef`;
    await sql`insert into dispatch.projects (name) values (${name})`;
    await sql`insert into dispatch.access_tokens (name, project, digest, read_only) values (${name}, ${name}, ${tokenDigest(token)}, false)`;
    await sql`select pg_notify(${ACCESS_TOKENS_CHANNEL}, '')`;
    return token;
  } finally {
    await sql.end();
  }
}

/** The busy project's backlog, `BATCH_ITEMS` a batch, spread over the slow receivers. */
async function publishBacklog(dispatch: DispatchProcess, token: string, slow: Receiver[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let start = (next += BATCH_ITEMS) - BATCH_ITEMS; start < BACKLOG; start = (next += BATCH_ITEMS) - BATCH_ITEMS) {
      const count = Math.min(BATCH_ITEMS, BACKLOG - start);
      const items = Array.from({ length: count }, (_, i) => ({ destination: `${slow[(start + i) % slow.length]!.url}/backlog`, body: "b" }));
      await post(dispatch, token, "/v2/batch", JSON.stringify(items), { "Content-Type": "application/json" });
    }
  };
  // The new token is taken up on a NOTIFY: the first batch retries until it is.
  for (let tries = 0; ; tries++) {
    const { statusCode, body } = await request(`${dispatch.url}/v2/queues`, { headers: { Authorization: `Bearer ${token}` } });
    await body.dump();
    if (statusCode === 200 || tries > 50) break;
    await sleep(100);
  }
  await Promise.all(Array.from({ length: BATCHES_IN_FLIGHT }, worker));
}

async function post(dispatch: DispatchProcess, token: string, path: string, body: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await request(`${dispatch.url}${path}`, { method: "POST", headers: { Authorization: `Bearer ${token}`, ...headers }, body });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`POST ${path}: ${response.statusCode} ${text.slice(0, 200)}`);
}

async function waiting(databaseUrl: string): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from dispatch.messages where project = 'backlog' and state = any(${PENDING_STATES}::text[])`;
    return row!.n;
  } finally {
    await sql.end();
  }
}

interface Receiver {
  url: string;
  /** First arrival time per path (performance.now()). */
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 answering 200 after `delayMs`, noting when each path first arrived. */
async function startReceiver(delayMs: number): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    if (!arrivals.has(req.url!)) arrivals.set(req.url!, performance.now());
    req.resume();
    req.on("end", () => setTimeout(() => res.end("ok"), delayMs));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    arrivals,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
