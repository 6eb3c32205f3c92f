/**
 * Scenario 6, crash recovery: two Dispatch processes on one database with the
 * liveness settings in force (Dispatch's defaults unless `DISPATCH_*`
 * variables pass through). The first (the victim) gets messages whose
 * deliveries the receiver holds open; the second (the survivor) is started,
 * and once it has been up longer than dead-after (so its own start-up does not
 * delay its sweep) the victim is SIGKILLed. Measured per message: SIGKILL →
 * the survivor's resend arriving at the receiver (answered 200).
 */
import postgres from "postgres";
import { request } from "undici";
import { loadConfig } from "../src/config/config";
import { cpuSnapshot, type CpuUse, cpuUseSince } from "./cpu";
import { type DispatchProcess, startDispatch } from "./dispatch";
import type { HeldArrivals } from "./receiver";
import { type BenchContext, benchPids } from "./scenarios";
import { type Percentiles, percentiles, sleep } from "./stats";

/** What scenario 6 measured. */
export interface CrashRecovery {
  /** Messages published to the victim, each held open at the receiver on its first delivery. */
  messages: number;
  /** Of those, how many were held open (delivered once, not answered) when the victim was killed. */
  inFlightAtKill: number;
  /** Liveness settings of both processes, ms, and whether they are Dispatch's defaults. */
  heartbeatIntervalMs: number;
  deadAfterMs: number;
  defaultSettings: boolean;
  /** How long the survivor had been up (since its banner) when the victim was killed, ms. */
  survivorUpMs: number;
  /** SIGKILL → arrival of the survivor's resend, per redelivered message, ms. */
  redeliveryMs: Percentiles;
  /** Messages resent after the SIGKILL. */
  redelivered: number;
  /** Messages not resent within `allowanceMs` of the SIGKILL. */
  lost: number;
  /** Arrivals beyond the held one and the one expected resend. */
  extraDuplicates: number;
  /** Messages resent before the SIGKILL (the held first attempt timed out): not a crash recovery. */
  resentBeforeKill: number;
  allowanceMs: number;
  /** Whether every message reached a final state with no claim left, within `allowanceMs`. */
  settled: boolean;
  /** CPU from the SIGKILL until settled; the focus process is the survivor. */
  cpu: CpuUse;
  startupMs: { victim: number; survivor: number };
  /** Lines the survivor wrote to stderr, at most 20. */
  dispatchLog: string[];
  notes: string[];
}

/** Runs scenario 6 on a fresh database (dropped afterwards). */
export async function crashRecovery(ctx: BenchContext): Promise<CrashRecovery> {
  const databaseUrl = await ctx.server.createDatabase("crash");
  const run = "s6";
  const started: DispatchProcess[] = [];
  try {
    const victim = await startDispatch(databaseUrl);
    started.push(victim);
    const { heartbeatIntervalMs, workerDeadAfterMs: deadAfterMs } = victim.config;
    const defaults = loadConfig({});
    const notes: string[] = [];
    const messages = Math.min(ctx.plan.crashMessages, victim.config.workerConcurrency);
    if (messages < ctx.plan.crashMessages) notes.push(`${messages} messages, not ${ctx.plan.crashMessages}: the worker concurrency in force is ${messages}`);

    await ctx.receiver.call("hold", { run }, 10_000);
    for (let seq = 0; seq < messages; seq++) await publish(victim, `${ctx.receiverUrl}/in/${run}/0`, seq);
    await ctx.receiver.call("wait", { run, expected: messages, timeoutMs: 20_000 }, 30_000);

    const survivor = await startDispatch(databaseUrl);
    started.push(survivor);
    const survivorReadyAt = Date.now();
    // A survivor sweeps only once it has beaten for dead-after itself; past that (and two beats of slack)
    // it sweeps as soon as the victim's heartbeat is stale, as a long-running one would.
    await sleep(survivorReadyAt + deadAfterMs + 2 * heartbeatIntervalMs - Date.now());
    const atKill = await ctx.receiver.call<HeldArrivals[]>("held", { run }, 10_000);

    const pids = () => benchPids(ctx, [survivor.pid]);
    const cpuBefore = cpuSnapshot(pids());
    const killedAt = Date.now();
    await victim.kill();
    const settled = await waitUntilSettled(databaseUrl, messages, killedAt + ctx.plan.crashAllowanceMs);
    const cpu = cpuUseSince(cpuBefore, pids(), [survivor.pid]);
    const arrivals = await ctx.receiver.call<HeldArrivals[]>("held", { run }, 10_000);

    const times = new Map(arrivals.map((a) => [a.seq, a.times]));
    const resends: number[] = [];
    let extraDuplicates = 0;
    let resentBeforeKill = 0;
    for (let seq = 0; seq < messages; seq++) {
      const [, resend, ...extra] = times.get(seq) ?? [];
      if (resend !== undefined && resend < killedAt) resentBeforeKill++;
      else if (resend !== undefined && resend <= killedAt + ctx.plan.crashAllowanceMs) resends.push(resend - killedAt);
      extraDuplicates += extra.length;
    }
    return {
      messages,
      inFlightAtKill: atKill.filter((a) => a.times.length === 1).length,
      heartbeatIntervalMs,
      deadAfterMs,
      defaultSettings: heartbeatIntervalMs === defaults.heartbeatIntervalMs && deadAfterMs === defaults.workerDeadAfterMs,
      survivorUpMs: killedAt - survivorReadyAt,
      redeliveryMs: percentiles(resends),
      redelivered: resends.length,
      lost: messages - resends.length - resentBeforeKill,
      extraDuplicates,
      resentBeforeKill,
      allowanceMs: ctx.plan.crashAllowanceMs,
      settled,
      cpu,
      startupMs: { victim: victim.startupMs, survivor: survivor.startupMs },
      dispatchLog: survivor.problems(),
      notes,
    };
  } finally {
    // Answers what is still held, then stops the survivor (the victim is gone already, unless a step failed).
    await ctx.receiver.call("forget", { run }, 10_000);
    await Promise.all(started.map((dispatch) => dispatch.stop()));
    await ctx.server.dropDatabase(databaseUrl);
  }
}

/** Publishes message `seq` (the load generator's body head, so the receiver can read it) to `destination`. */
async function publish(dispatch: DispatchProcess, destination: string, seq: number): Promise<void> {
  const response = await request(`${dispatch.url}/v2/publish/${destination}`, {
    method: "POST",
    headers: { authorization: `Bearer ${dispatch.token}`, "content-type": "application/json" },
    body: `{"s":${seq},"t":${Date.now()},"d":0}`,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`publishing message ${seq} failed: ${response.statusCode} ${text}`);
}

/**
 * Waits until all `messages` of the database are in a final state and no
 * claim is left (so no attempt is in flight and no further arrival can come),
 * or `deadline` passes.
 */
async function waitUntilSettled(databaseUrl: string, messages: number, deadline: number): Promise<boolean> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    for (;;) {
      const [row] = await sql<{ final: number; claims: number }[]>`
        select
          (select count(*)::int from dispatch.messages where state in ('DELIVERED', 'FAILED', 'CANCELED')) as final,
          (select count(*)::int from dispatch.claims) as claims`;
      if (row!.final >= messages && row!.claims === 0) return true;
      if (Date.now() >= deadline) return false;
      await sleep(100);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
