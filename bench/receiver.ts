/**
 * The receiver helper: a node:http server on 127.0.0.1 that answers 200 at
 * once and records every delivery. Deliveries go to `/in/<run>/<endpoint>` and
 * carry the load generator's body (`{"s":seq,"t":sentAtMs,"d":delayMs,...}`),
 * so arrival − sent is measured with one clock. `/raw` only counts (baseline).
 * A run can be held: the first arrival of each of its deliveries (sequence and
 * endpoint) is recorded but not answered until the run is released, so it
 * stays in flight; later arrivals are answered at once.
 *
 * Commands (over IPC): `stats`, `wait`, `forget`, `hold`, `held`, `release`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serveHelper } from "./ipc";
import { type Percentiles, percentiles, Samples, sleep } from "./stats";

/** Endpoints per run are keyed `seq * ENDPOINT_SLOTS + endpoint`. */
const ENDPOINT_SLOTS = 1000;
const HEAD = /^\{"s":(\d+),"t":(\d+),"d":(\d+)/;

interface RunRecord {
  /** Deliveries per key (sequence and endpoint). */
  counts: Map<number, number>;
  messageIds: Set<string>;
  arrivals: Samples;
  latency: Samples;
  lateness: Samples;
  total: number;
  malformed: number;
}

/** A held run: the answers not yet sent, and every arrival time per key. */
interface Hold {
  waiting: Array<() => void>;
  arrivals: Map<number, number[]>;
}

const runs = new Map<string, RunRecord>();
const holds = new Map<string, Hold>();
let rawCount = 0;

/** Records a delivery; returns its key (sequence and endpoint), or null when its body is malformed. */
function record(run: string, endpoint: number, body: Buffer, messageId: string | undefined, at: number): number | null {
  let entry = runs.get(run);
  if (!entry) {
    entry = { counts: new Map(), messageIds: new Set(), arrivals: new Samples(), latency: new Samples(), lateness: new Samples(), total: 0, malformed: 0 };
    runs.set(run, entry);
  }
  entry.total++;
  const head = HEAD.exec(body.toString("latin1", 0, Math.min(body.length, 64)));
  if (!head) {
    entry.malformed++;
    return null;
  }
  const [seq, sent, delay] = [Number(head[1]), Number(head[2]), Number(head[3])];
  const key = seq * ENDPOINT_SLOTS + endpoint;
  entry.counts.set(key, (entry.counts.get(key) ?? 0) + 1);
  if (messageId) entry.messageIds.add(messageId);
  entry.arrivals.push(at);
  entry.latency.push(at - sent);
  if (delay > 0) entry.lateness.push(at - sent - delay);
  return key;
}

/** In a held run, notes the arrival of `key` and keeps `answer` back if it is the key's first; returns whether it did. */
function holdIfFirst(run: string, key: number | null, at: number, answer: () => void): boolean {
  const hold = holds.get(run);
  if (!hold || key === null) return false;
  const times = hold.arrivals.get(key) ?? [];
  times.push(at);
  hold.arrivals.set(key, times);
  if (times.length > 1) return false;
  hold.waiting.push(answer);
  return true;
}

/** Answers every request of `run` held open, and stops holding it. */
function release({ run }: { run: string }): void {
  for (const answer of holds.get(run)?.waiting ?? []) answer();
  holds.delete(run);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const at = Date.now();
    const path = req.url ?? "";
    const answer = () => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
      res.end("ok");
    };
    if (path.startsWith("/raw")) rawCount++;
    else {
      const [, kind, run, endpoint] = path.split("/");
      if (kind === "in" && run) {
        const id = req.headers["svc-message-id"] ?? req.headers["upstash-message-id"];
        const key = record(run, Number(endpoint ?? 0) || 0, Buffer.concat(chunks), typeof id === "string" ? id : undefined, at);
        if (holdIfFirst(run, key, at, answer)) return;
      }
    }
    answer();
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;

/** What the publisher knows: sequences 0..sent-1 were sent, `failedSeqs` were not accepted. */
export interface Accepted {
  sent: number;
  failedSeqs: number[];
}

/** Exactly-once accounting and timings of one run, as `stats` returns them. */
export interface RunStats {
  /** Deliveries expected: accepted publishes × endpoints. */
  expected: number;
  arrivals: number;
  distinct: number;
  missing: number;
  duplicates: number;
  /** Arrivals for publishes that were not accepted (or never sent). */
  unexpected: number;
  distinctMessageIds: number;
  malformed: number;
  firstArrival: number | null;
  lastArrival: number | null;
  /** Arrivals inside the window given to `stats`. */
  inWindow: number;
  /** Publish → arrival, ms. */
  latency: Percentiles;
  /** Arrival − (sent + delay), ms, for delayed messages. */
  lateness: Percentiles;
  /** Arrivals per second from the window's start. */
  perSecond: number[];
}

function stats(args: { run: string; accepted: Accepted; endpoints: number; window?: [number, number] }): RunStats {
  const entry = runs.get(args.run);
  const failed = new Set(args.accepted.failedSeqs);
  let missing = 0;
  for (let seq = 0; seq < args.accepted.sent; seq++) {
    if (failed.has(seq)) continue;
    for (let e = 0; e < args.endpoints; e++) if (!entry?.counts.has(seq * ENDPOINT_SLOTS + e)) missing++;
  }
  let unexpected = 0;
  for (const key of entry?.counts.keys() ?? []) {
    const seq = Math.floor(key / ENDPOINT_SLOTS);
    if (seq >= args.accepted.sent || failed.has(seq)) unexpected++;
  }
  const arrivals = entry?.arrivals.values() ?? new Float64Array();
  let first = Infinity;
  let last = -Infinity;
  let inWindow = 0;
  const [from, to] = args.window ?? [0, 0];
  const perSecond: number[] = [];
  for (const at of arrivals) {
    first = Math.min(first, at);
    last = Math.max(last, at);
    if (at >= from && at < to) inWindow++;
    const second = Math.floor((at - from) / 1000);
    if (args.window && second >= 0 && second < 600) perSecond[second] = (perSecond[second] ?? 0) + 1;
  }
  return {
    expected: (args.accepted.sent - failed.size) * args.endpoints,
    arrivals: entry?.total ?? 0,
    distinct: entry?.counts.size ?? 0,
    missing,
    duplicates: (entry ? entry.total - entry.malformed : 0) - (entry?.counts.size ?? 0),
    unexpected,
    distinctMessageIds: entry?.messageIds.size ?? 0,
    malformed: entry?.malformed ?? 0,
    firstArrival: arrivals.length ? first : null,
    lastArrival: arrivals.length ? last : null,
    inWindow,
    latency: percentiles(entry?.latency.values() ?? []),
    lateness: percentiles(entry?.lateness.values() ?? []),
    perSecond: Array.from(perSecond, (n) => n ?? 0),
  };
}

/** Waits until `expected` distinct deliveries of `run` arrived, or `timeoutMs` passed. */
async function wait(args: { run: string; expected: number; timeoutMs: number }) {
  const deadline = Date.now() + args.timeoutMs;
  while (Date.now() < deadline && (runs.get(args.run)?.counts.size ?? 0) < args.expected) await sleep(25);
  const distinct = runs.get(args.run)?.counts.size ?? 0;
  return { complete: distinct >= args.expected, distinct, at: Date.now() };
}

/** Forgets `run`, answering whatever it still holds. */
function forget({ run }: { run: string }): void {
  release({ run });
  runs.delete(run);
}

/** Arrivals of one delivery (sequence and endpoint) of a held run, ms since the epoch, in order. */
export interface HeldArrivals {
  seq: number;
  endpoint: number;
  times: number[];
}

function heldArrivals({ run }: { run: string }): HeldArrivals[] {
  return [...(holds.get(run)?.arrivals ?? [])].map(([key, times]) => ({
    seq: Math.floor(key / ENDPOINT_SLOTS),
    endpoint: key % ENDPOINT_SLOTS,
    times,
  }));
}

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  serveHelper(
    {
      stats,
      wait,
      forget,
      rawCount: () => rawCount,
      hold: ({ run }: { run: string }) => void holds.set(run, { waiting: [], arrivals: new Map() }),
      held: heldArrivals,
      release,
    },
    { url: `http://127.0.0.1:${port}` },
  );
});
