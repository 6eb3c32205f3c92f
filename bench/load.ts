/**
 * The load generator helper: a real HTTP client (undici with a keep-alive
 * Agent) in its own process, so the orchestrator's work never competes with
 * it. Every publish body starts `{"s":seq,"t":sentAtMs,"d":delayMs,` and is
 * padded to the requested size; the receiver reads that head back.
 *
 * Commands (over IPC): `publish` (closed loop at a fixed concurrency, or open
 * loop at a fixed offered rate) and `raw` (plain POSTs straight to the
 * receiver, the outbound-HTTP baseline).
 */
import { Agent, request } from "undici";
import { serveHelper } from "./ipc";
import { type Percentiles, percentiles, Samples, sleep } from "./stats";

/** How publishes are paced. */
export type Pacing =
  | { kind: "closed"; concurrency: number }
  /** `rate` publishes/s; sends wait (and fall behind schedule) while `maxInFlight` are outstanding. */
  | { kind: "open"; rate: number; maxInFlight: number };

/** One publishing run. */
export interface PublishLoad {
  /** Full URL to POST to, e.g. `<dispatch>/v2/publish/<receiver>/in/<run>/0`. */
  target: string;
  token: string;
  /** When set, publish `i` goes with `tokens[i % tokens.length]` instead (one token per project). */
  tokens?: string[];
  durationMs: number;
  bodyBytes: number;
  pacing: Pacing;
  /** When set, each message gets `Svc-Delay` of a random whole number of seconds in this range. */
  delaySeconds?: [number, number];
}

/** What a publishing run did, as the publisher saw it. */
export interface LoadResult {
  /** Publishes sent (sequences 0..sent-1). */
  sent: number;
  /** Publishes answered 2xx. */
  accepted: number;
  /** Sequences not answered 2xx (status or network error). */
  failedSeqs: number[];
  statuses: Record<string, number>;
  /** The first few error messages. */
  errors: string[];
  startedAt: number;
  /** When the last publish was answered. */
  endedAt: number;
  /** Request latency, ms. */
  latency: Percentiles;
  /** Open loop: how far behind schedule sending fell at worst, ms; and sends planned but never made. */
  maxLagMs: number;
  skipped: number;
}

const REQUEST_TIMEOUT_MS = 20_000;

function makeBody(seq: number, sentAt: number, delayMs: number, size: number): string {
  const head = `{"s":${seq},"t":${sentAt},"d":${delayMs},"p":"`;
  return `${head}${"x".repeat(Math.max(0, size - head.length - 2))}"}`;
}

/** Most connections the client opens to one service (the open loop's largest `maxInFlight`). */
const MAX_CONNECTIONS = 512;
let client: { origin: string; agent: Agent } | null = null;

/**
 * The client of the service at `origin`, kept from one publishing run to the
 * next as a long-lived client keeps its connections: the warm-up's
 * connections are still open when the measured window starts. A Node server
 * accepts one new connection per event-loop turn (libuv since 1.45: "don't
 * accept() connections in a loop"), so a window that began with none would
 * mostly measure how fast a busy server absorbs hundreds of connections at
 * once (bench/READING.md). A run against another service closes the last one's.
 */
async function clientOf(origin: string): Promise<Agent> {
  if (client?.origin === origin) return client.agent;
  await client?.agent.close();
  const agent = new Agent({ connections: MAX_CONNECTIONS, keepAliveTimeout: 30_000, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
  client = { origin, agent };
  return agent;
}

async function publish(load: PublishLoad): Promise<LoadResult> {
  const url = new URL(load.target);
  const agent = await clientOf(url.origin);
  const latency = new Samples();
  const failedSeqs: number[] = [];
  const statuses: Record<string, number> = {};
  const errors: string[] = [];
  let sent = 0;
  let accepted = 0;
  let inFlight = 0;
  let endedAt = Date.now();

  const send = async () => {
    const seq = sent++;
    inFlight++;
    const delay = load.delaySeconds ? randomInt(load.delaySeconds[0], load.delaySeconds[1]) : 0;
    const token = load.tokens ? load.tokens[seq % load.tokens.length]! : load.token;
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    if (delay > 0) headers["svc-delay"] = `${delay}s`;
    const started = performance.now();
    try {
      const response = await request(url, {
        method: "POST",
        headers,
        body: makeBody(seq, Date.now(), delay * 1000, load.bodyBytes),
        dispatcher: agent,
      });
      await response.body.dump();
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      if (response.statusCode >= 200 && response.statusCode < 300) accepted++;
      else failedSeqs.push(seq);
    } catch (error) {
      statuses.error = (statuses.error ?? 0) + 1;
      if (errors.length < 5) errors.push((error as Error).message);
      failedSeqs.push(seq);
    } finally {
      latency.push(performance.now() - started);
      inFlight--;
      endedAt = Date.now();
    }
  };

  const startedAt = Date.now();
  const end = startedAt + load.durationMs;
  let maxLagMs = 0;
  let skipped = 0;
  if (load.pacing.kind === "closed") {
    await Promise.all(
      Array.from({ length: load.pacing.concurrency }, async () => {
        while (Date.now() < end) await send();
      }),
    );
  } else {
    const { rate, maxInFlight } = load.pacing;
    const planned = Math.floor((load.durationMs * rate) / 1000);
    const running = new Set<Promise<void>>();
    // Send i is due at i / rate seconds after the start.
    for (let now = Date.now(); now < end && sent < planned; now = Date.now()) {
      const due = Math.min(planned, Math.floor(((now - startedAt) * rate) / 1000) + 1);
      while (sent < due && inFlight < maxInFlight) {
        const promise = send();
        running.add(promise);
        void promise.then(() => running.delete(promise));
      }
      maxLagMs = Math.max(maxLagMs, ((due - sent) * 1000) / rate);
      await sleep(1);
    }
    skipped = planned - sent;
    await Promise.all(running);
  }
  return { sent, accepted, failedSeqs, statuses, errors, startedAt, endedAt, latency: percentiles(latency.values()), maxLagMs, skipped };
}

/** Plain POSTs of `bodyBytes` to `target` with `concurrency` in flight, for `durationMs`. */
async function raw(args: { target: string; concurrency: number; durationMs: number; bodyBytes: number }) {
  const url = new URL(args.target);
  const agent = new Agent({ connections: args.concurrency, keepAliveTimeout: 30_000 });
  const body = "x".repeat(args.bodyBytes);
  const latency = new Samples();
  let ok = 0;
  let failed = 0;
  const startedAt = Date.now();
  const end = startedAt + args.durationMs;
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (Date.now() < end) {
        const started = performance.now();
        try {
          const response = await request(url, { method: "POST", body, dispatcher: agent });
          await response.body.dump();
          if (response.statusCode === 200) ok++;
          else failed++;
        } catch {
          failed++;
        }
        latency.push(performance.now() - started);
      }
    }),
  );
  const endedAt = Date.now();
  await agent.close();
  return { ok, failed, startedAt, endedAt, perSecond: (ok * 1000) / (endedAt - startedAt), latency: percentiles(latency.values()) };
}

function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

serveHelper({ publish, raw }, true);
