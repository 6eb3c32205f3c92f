/**
 * The scenarios: publish throughput (with and without delivery), end-to-end
 * latency at a fixed rate, maximum delivered rate, fan-out to a URL group and
 * delay precision. Each runs a freshly started Dispatch, drives it from the
 * load helper, reads what actually arrived from the receiver helper, and
 * counts what it cost (bench/costs.ts).
 */
import postgres from "postgres";
import { request } from "undici";
import { byProject } from "../src/db/citus/by-project";
import { cancelMessageRows } from "../src/db/queries/cancel-messages";
import { type Costs, openCostWindow } from "./costs";
import { cpuSnapshot, type CpuUse, cpuUseSince, watchedPids } from "./cpu";
import type { DatabaseServer } from "./database";
import { type DispatchProcess, type Role, startDispatch } from "./dispatch";
import type { Helper } from "./ipc";
import type { LoadResult, Pacing } from "./load";
import type { RunStats } from "./receiver";

/** How long and how hard each scenario runs. */
export interface Plan {
  quick: boolean;
  /** Measurement window of each scenario, ms. */
  windowMs: number;
  /** Longest wait for outstanding deliveries after publishing stops, ms. */
  drainMs: number;
  /** The same for scenario 1, whose leftovers are cancelled anyway, ms. */
  publishDrainMs: number;
  /** Unmeasured publishing (16 in flight) before each measurement, so a just-started Dispatch is warm, ms; 0 for none. */
  warmupMs: number;
  concurrency: number;
  bodyBytes: number;
  e2eRate: number;
  fanOutRate: number;
  fanOutEndpoints: number;
  /** Delayed messages: how many, at what rate, with `Svc-Delay` in this range of seconds. */
  delayCount: number;
  delayRate: number;
  delaySeconds: [number, number];
  backlogRows: number;
  /** Crash recovery: messages in flight on the killed process, and how long after the SIGKILL a resend may arrive, ms. */
  crashMessages: number;
  crashAllowanceMs: number;
}

/** What the scenarios share. */
export interface BenchContext {
  server: DatabaseServer;
  receiver: Helper;
  receiverUrl: string;
  load: Helper;
  plan: Plan;
  log: (line: string) => void;
}

/** One measurement: what the publisher saw and what the receiver got. */
export interface Measurement {
  publish: Omit<LoadResult, "failedSeqs"> & { failed: number; perSecond: number };
  delivery: Omit<RunStats, "perSecond"> & {
    /** Distinct deliveries that arrived while publishing, per second of the publishing window. */
    inWindowPerSecond: number;
    /** Distinct deliveries per second from the first publish to the last arrival. */
    overallPerSecond: number;
    /** Whether every expected delivery arrived within the drain allowance. */
    drained: boolean;
    /** Last arrival − end of publishing, ms (null when not drained). */
    drainMs: number | null;
    /** How long the run waited for outstanding deliveries at most, ms. */
    drainAllowanceMs: number;
    arrivalsPerSecond: number[];
  };
  /** Peak memory of the Dispatch process (of the largest, for several) during this measurement, MiB. */
  rss: { sampledMiB: number; hwmMiB: number };
  /** CPU while publishing: the machine, the benchmark's processes (with Postgres), Dispatch's processes alone, and other work. */
  cpu: CpuUse;
  /** What it cost per message, from before the warm-up until the service stopped. */
  costs: Costs;
}

/** Which service a scenario measured: Dispatch, the minimal pipeline, or a peer built on a queue library (bench/peers). */
export type Service = "dispatch" | "pipeline" | "pg-boss" | "graphile-worker";

/** A scenario's result as reported. */
export interface ScenarioResult {
  id: string;
  title: string;
  service: Service;
  /** Service processes measured together: CPU is their sum, peak RSS the largest one's. */
  processes: number;
  /** Nothing delivers in this scenario (API role alone): deliveries are neither expected nor checked. */
  publishOnly: boolean;
  dispatchStartupMs: number;
  measurement: Measurement;
  /** Lines Dispatch wrote to stderr (warnings, errors), at most 20. */
  dispatchLog: string[];
  notes: string[];
}

interface MeasureOptions {
  run: string;
  databaseUrl: string;
  /** The service's message table (schema.table, its partitions included), whose HOT ratio is reported. */
  messageTable: string;
  /** Nothing delivers: counts publishes, waits for no deliveries. */
  publishOnly?: boolean;
  destination: string;
  pacing: Pacing;
  durationMs: number;
  endpoints: number;
  drainMs: number;
  delaySeconds?: [number, number];
  /** Tokens to publish with in turn (one per project); the service's own token when absent. */
  tokens?: string[];
}

/**
 * Publishes with the load helper, waits (bounded) for the deliveries and
 * collects both sides; then stops the service, so its costs are complete.
 */
export async function measure(ctx: BenchContext, dispatch: DispatchProcess, options: MeasureOptions): Promise<Measurement> {
  const { run, endpoints } = options;
  const costWindow = await openCostWindow(ctx.server, options.databaseUrl, dispatch.pids, options.messageTable);
  const warm = ctx.plan.warmupMs > 0 ? await warmUp(ctx, dispatch, `${run}_warmup`, !!options.publishOnly) : 0;
  dispatch.resetPeak();
  const pids = () => benchPids(ctx, dispatch.pids);
  const cpuBefore = cpuSnapshot(pids());
  const load = await ctx.load.call<LoadResult>(
    "publish",
    {
      target: `${dispatch.url}/v2/publish/${options.destination}`,
      token: dispatch.token,
      tokens: options.tokens,
      durationMs: options.durationMs,
      bodyBytes: ctx.plan.bodyBytes,
      pacing: options.pacing,
      delaySeconds: options.delaySeconds,
    },
    options.durationMs + 60_000,
  );
  const cpu = cpuUseSince(cpuBefore, pids(), dispatch.pids);
  const waited = await ctx.receiver.call<{ complete: boolean }>(
    "wait",
    { run, expected: load.accepted * endpoints, timeoutMs: options.drainMs },
    options.drainMs + 10_000,
  );
  const rss = dispatch.peakRss();
  const { perSecond, ...stats } = await ctx.receiver.call<RunStats>(
    "stats",
    { run, accepted: { sent: load.sent, failedSeqs: load.failedSeqs }, endpoints, window: [load.startedAt, load.endedAt] },
    60_000,
  );
  await ctx.receiver.call("forget", { run }, 10_000);
  costWindow.serviceDone();
  await dispatch.stop();
  const costs = options.publishOnly
    ? await costWindow.close(warm + load.accepted, "publish")
    : await costWindow.close(warm + stats.distinct, "delivery");
  const { failedSeqs, ...publish } = load;
  const windowS = Math.max(0.001, (load.endedAt - load.startedAt) / 1000);
  const spanS = stats.lastArrival === null ? null : Math.max(0.001, (stats.lastArrival - load.startedAt) / 1000);
  return {
    publish: { ...publish, failed: failedSeqs.length, perSecond: load.accepted / windowS },
    delivery: {
      ...stats,
      inWindowPerSecond: stats.inWindow / windowS,
      overallPerSecond: spanS === null ? 0 : stats.distinct / spanS,
      drained: waited.complete,
      drainMs: waited.complete && stats.lastArrival !== null ? Math.max(0, stats.lastArrival - load.endedAt) : null,
      drainAllowanceMs: options.drainMs,
      arrivalsPerSecond: perSecond,
    },
    rss,
    cpu,
    costs,
  };
}

/**
 * Publishes to one receiver URL for `plan.warmupMs` and waits (bounded) until
 * those deliveries arrived (unless `publishOnly`); returns how many arrived
 * (or, publish-only, were accepted).
 */
async function warmUp(ctx: BenchContext, dispatch: DispatchProcess, run: string, publishOnly: boolean): Promise<number> {
  const load = await ctx.load.call<LoadResult>(
    "publish",
    {
      target: `${dispatch.url}/v2/publish/${ctx.receiverUrl}/in/${run}/0`,
      token: dispatch.token,
      durationMs: ctx.plan.warmupMs,
      bodyBytes: ctx.plan.bodyBytes,
      pacing: { kind: "closed", concurrency: 16 },
    },
    ctx.plan.warmupMs + 60_000,
  );
  if (publishOnly) return load.accepted;
  const waited = await ctx.receiver.call<{ distinct: number }>(
    "wait",
    { run, expected: load.accepted, timeoutMs: ctx.plan.publishDrainMs },
    ctx.plan.publishDrainMs + 10_000,
  );
  await ctx.receiver.call("forget", { run }, 10_000);
  return waited.distinct;
}

/** The benchmark's own processes: this one, the helpers, `extra`, and the embedded Postgres cluster. */
export function benchPids(ctx: BenchContext, extra: number[] = []): number[] {
  const postmaster = ctx.server.postmasterPid;
  return watchedPids([process.pid, ctx.receiver.pid, ctx.load.pid, ...extra], postmaster ? [postmaster] : []);
}

/**
 * Runs `body` against Dispatch (`--role all`) started on `databaseUrl` (a
 * fresh database when omitted, dropped afterwards); Dispatch is stopped
 * whatever happens.
 */
export function withDispatch<T>(
  ctx: BenchContext,
  label: string,
  body: (dispatch: DispatchProcess, databaseUrl: string) => Promise<T>,
  databaseUrl?: string,
): Promise<T> {
  return withService(ctx, label, (url) => startDispatch(url), body, databaseUrl);
}

/** `withDispatch` for any service `start` runs on a database (a Dispatch role, the minimal pipeline). */
export async function withService<T>(
  ctx: BenchContext,
  label: string,
  start: (databaseUrl: string) => Promise<DispatchProcess>,
  body: (service: DispatchProcess, databaseUrl: string) => Promise<T>,
  databaseUrl?: string,
): Promise<T> {
  const url = databaseUrl ?? (await ctx.server.createDatabase(label));
  try {
    const dispatch = await start(url);
    try {
      return await body(dispatch, url);
    } finally {
      await dispatch.stop();
    }
  } finally {
    if (!databaseUrl) await ctx.server.dropDatabase(url);
  }
}

/** A Dispatch scenario's result. */
function result(id: string, title: string, dispatch: DispatchProcess, measurement: Measurement, notes: string[] = []): ScenarioResult {
  return serviceResult("dispatch", false, id, title, dispatch, measurement, notes);
}

/** A scenario's result for `service`. */
export function serviceResult(
  service: Service,
  publishOnly: boolean,
  id: string,
  title: string,
  process: DispatchProcess,
  measurement: Measurement,
  notes: string[] = [],
): ScenarioResult {
  return { id, title, service, processes: process.pids.length, publishOnly, dispatchStartupMs: process.startupMs, measurement, dispatchLog: process.problems(), notes };
}

/** Dispatch's message table. */
export const MESSAGES = "dispatch.messages";

/**
 * Scenario 1 then 2b on one database (empty, or seeded with a backlog):
 * publish throughput at `concurrency` in flight, then, after its deliveries
 * drained (leftovers are cancelled), the maximum delivered rate.
 */
export async function publishThenDeliver(ctx: BenchContext, databaseUrl: string, tag: string): Promise<ScenarioResult[]> {
  const { plan } = ctx;
  const closed: Pacing = { kind: "closed", concurrency: plan.concurrency };
  const destination = (run: string) => `${ctx.receiverUrl}/in/${run}/0`;
  const publish = await withDispatch(ctx, tag, async (dispatch) => {
    const run = `s1_${tag}`;
    const m = await measure(ctx, dispatch, { run, databaseUrl, messageTable: MESSAGES, destination: destination(run), pacing: closed, durationMs: plan.windowMs, endpoints: 1, drainMs: plan.publishDrainMs });
    return result(`1-publish${tag === "empty" ? "" : `-${tag}`}`, `Publish throughput (${tag} table)`, dispatch, m);
  }, databaseUrl);
  const cancelled = await cancelPendingDeliveries(databaseUrl);
  if (cancelled > 0) publish.notes.push(`${cancelled} messages still undelivered after the drain allowance were cancelled before 2b`);
  const deliver = await withDispatch(ctx, tag, async (dispatch) => {
    const run = `s2b_${tag}`;
    const m = await measure(ctx, dispatch, { run, databaseUrl, messageTable: MESSAGES, destination: destination(run), pacing: closed, durationMs: plan.windowMs, endpoints: 1, drainMs: plan.drainMs });
    return result(`2b-delivered${tag === "empty" ? "" : `-${tag}`}`, `Maximum delivered rate (${tag} table)`, dispatch, m);
  }, databaseUrl);
  return [publish, deliver];
}

/** Scenario 1-api: publish throughput of `dispatch start --role api` alone (nothing delivers), on an empty table. */
export async function publishApiOnly(ctx: BenchContext): Promise<ScenarioResult> {
  const { plan } = ctx;
  const role: Role = "api";
  return withService(ctx, "api", (url) => startDispatch(url, role), async (dispatch, databaseUrl) => {
    const run = "s1_api";
    const m = await measure(ctx, dispatch, {
      run,
      databaseUrl,
      messageTable: MESSAGES,
      publishOnly: true,
      destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "closed", concurrency: plan.concurrency },
      durationMs: plan.windowMs,
      endpoints: 1,
      drainMs: 0,
    });
    return serviceResult("dispatch", true, "1-publish-api", "Publish throughput, API role alone (nothing delivers; empty table)", dispatch, m);
  });
}

/** Scenario 2a: publish → arrival latency at a fixed offered rate. */
export async function endToEndAtRate(ctx: BenchContext): Promise<ScenarioResult> {
  const { plan } = ctx;
  return withDispatch(ctx, "e2e", async (dispatch, databaseUrl) => {
    const run = "s2a";
    const m = await measure(ctx, dispatch, {
      run,
      databaseUrl,
      messageTable: MESSAGES,
      destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "open", rate: plan.e2eRate, maxInFlight: 512 },
      durationMs: plan.windowMs,
      endpoints: 1,
      drainMs: plan.drainMs,
    });
    return result("2a-e2e", `End-to-end at ${plan.e2eRate} msg/s offered`, dispatch, m);
  });
}

/** Scenario 3: a URL group of `fanOutEndpoints` endpoints on the receiver, published to at a modest rate. */
export async function fanOut(ctx: BenchContext): Promise<ScenarioResult> {
  const { plan } = ctx;
  return withDispatch(ctx, "fanout", async (dispatch, databaseUrl) => {
    const run = "s3";
    const group = "bench-fanout";
    const endpoints = Array.from({ length: plan.fanOutEndpoints }, (_, i) => ({ url: `${ctx.receiverUrl}/in/${run}/${i}` }));
    const response = await request(`${dispatch.url}/v2/topics/${group}/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${dispatch.token}`, "content-type": "application/json" },
      body: JSON.stringify({ endpoints }),
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`creating the URL group failed: ${response.statusCode} ${text}`);
    const m = await measure(ctx, dispatch, {
      run,
      databaseUrl,
      messageTable: MESSAGES,
      destination: group,
      pacing: { kind: "open", rate: plan.fanOutRate, maxInFlight: 64 },
      durationMs: plan.windowMs,
      endpoints: plan.fanOutEndpoints,
      drainMs: plan.drainMs,
    });
    return result("3-fanout", `Fan-out to ${plan.fanOutEndpoints} endpoints at ${plan.fanOutRate} publishes/s`, dispatch, m);
  });
}

/** Scenario 4: `delayCount` messages with a random whole-second `Svc-Delay`; lateness vs send time + delay. */
export async function delayPrecision(ctx: BenchContext): Promise<ScenarioResult> {
  const { plan } = ctx;
  return withDispatch(ctx, "delay", async (dispatch, databaseUrl) => {
    const run = "s4";
    const m = await measure(ctx, dispatch, {
      run,
      databaseUrl,
      messageTable: MESSAGES,
      destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "open", rate: plan.delayRate, maxInFlight: 64 },
      durationMs: Math.ceil((plan.delayCount * 1000) / plan.delayRate),
      endpoints: 1,
      drainMs: plan.delaySeconds[1] * 1000 + plan.drainMs,
      delaySeconds: plan.delaySeconds,
    });
    return result("4-delay", `Delay precision (Svc-Delay ${plan.delaySeconds[0]}s..${plan.delaySeconds[1]}s)`, dispatch, m);
  });
}

/**
 * Cancels messages still waiting to be delivered within the next day (and
 * removes their engine jobs) so the next measurement starts clean; messages
 * due later (a seeded backlog) are left alone. Returns how many were cancelled.
 */
async function cancelPendingDeliveries(databaseUrl: string): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    // Cancelled as the service cancels (off the work list, out of a destination's line), not by a write of its own.
    const pending = await sql<{ id: string; project: string }[]>`
      select id, project from dispatch.messages where state in ('CREATED', 'RETRY') and next_delivery_at < now() + interval '1 day'`;
    const cancelled = [];
    for (const [project, rows] of byProject(pending, (row) => row.project)) {
      cancelled.push(...(await cancelMessageRows(sql, project, rows.map((row) => row.id))));
    }
    await sql`delete from graphile_worker._private_jobs where run_at < now() + interval '1 day'`;
    return cancelled.length;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
