/**
 * Scenario 2d, noisy neighbour: 2b's load (publishing as fast as possible,
 * `concurrency` in flight, to one receiver URL) while a second destination
 * hangs (hanging-destination.ts: its own origin on 127.0.0.1, never answers)
 * with `BACKLOG` messages already due. The backlog is published first
 * (/v2/batch, 100 a request), and the measurement starts once Dispatch holds
 * its share of slots open at the hanging destination, has taken the rest of
 * the backlog off the work list (into the destination's line), the message
 * table is vacuumed (the backlog's inserts and updates are not the window's
 * work: left to autovacuum, they would be cleaned up in it), and the
 * statistics count those writes (backends report them a second or so late:
 * counted in the window, they would be charged to its deliveries). A plain
 * 2b runs right before it, on a fresh database of its own: the two back to
 * back carry little of this host's drift (paired.ts), and the targets are
 * their ratios. Dispatch is stopped as in every scenario (its graceful stop
 * waits out its grace for the hung requests, then hands them back), then the
 * hanging destination drops whatever it still holds.
 */
import postgres from "postgres";
import { request } from "undici";
import { deliveredRate, deliveredRateWindow } from "./delivered-rate";
import type { DispatchProcess } from "./dispatch";
import { type HangingDestination, startHangingDestination } from "./hanging-destination";
import { type BenchContext, measure, MESSAGES, type ScenarioResult, serviceResult, withDispatch } from "./scenarios";
import { sleep } from "./stats";

/** The plain 2b measured right before 2d, and 2d itself. */
export const NOISY_ALONE_ID = "2d-alone";
export const NOISY_ID = "2d-noisy-neighbour";

/** Messages due to the hanging destination when the measurement starts (`BENCH_NOISY_BACKLOG` sets another, for a run of 2d alone). */
const BACKLOG = Number(process.env.BENCH_NOISY_BACKLOG ?? 10_000);
const BATCH_ITEMS = 100;
const BATCHES_IN_FLIGHT = 4;
/** Longest wait, once the backlog is published, for Dispatch to hold its share and line the rest up and for the statistics to count it, ms. */
const SETTLE_MS = 30_000;

/** What 2d saw of the hanging destination; the two measurements are among the run's scenarios. */
export interface NoisyNeighbourRun {
  /** Messages published to the hanging destination before the measurement. */
  backlog: number;
  /** Requests one destination may hold open: DISPATCH_DESTINATION_SHARE of DISPATCH_WORKER_CONCURRENCY. */
  share: number;
  /** Publishing the backlog; then until Dispatch held its share with none of the backlog left on the work list, and until the statistics counted those writes, ms. */
  publishMs: number;
  settleMs: number;
  countedMs: number;
  /** Whether both happened within `SETTLE_MS`. */
  settled: boolean;
  /** Backlog messages in the hanging destination's line when the measurement started. */
  parked: number;
  /** Requests the hanging destination held open when publishing started and when it ended, at most at once, and received in all. */
  held: { atStart: number; atEnd: number; peak: number; received: number };
}

/** Runs the plain 2b, then 2d on a fresh database; the hanging destination is closed however it ends. */
export async function noisyNeighbour(ctx: BenchContext): Promise<{ results: ScenarioResult[]; noisy: NoisyNeighbourRun }> {
  const alone = await deliveredRate(ctx, "dispatch", "s2d_alone", NOISY_ALONE_ID, "2b alone, right before 2d");
  const hanging = await startHangingDestination();
  try {
    return await withDispatch(ctx, "noisy", async (dispatch, databaseUrl) => {
      const backlog = await lineUpBacklog(ctx, dispatch, databaseUrl, hanging);
      const run = "s2d_noisy";
      const m = await measure(ctx, dispatch, { ...deliveredRateWindow(ctx, run), databaseUrl, messageTable: MESSAGES });
      const held = {
        atStart: hanging.openAt(m.publish.startedAt),
        atEnd: hanging.openAt(m.publish.endedAt),
        peak: hanging.peak(),
        received: hanging.received(),
      };
      const notes = backlog.settled ? [] : [`the hanging destination's backlog had not settled after ${SETTLE_MS / 1000} s`];
      const noisy = serviceResult("dispatch", false, NOISY_ID, `2b beside a hanging destination with ${BACKLOG.toLocaleString("en-US")} messages due`, dispatch, m, notes);
      return { results: [alone, noisy], noisy: { ...backlog, held } };
    });
  } finally {
    await hanging.close();
  }
}

/** Publishes the backlog and waits (bounded) until Dispatch holds its share open and has lined up the rest, and the statistics count it. */
async function lineUpBacklog(ctx: BenchContext, dispatch: DispatchProcess, databaseUrl: string, hanging: HangingDestination) {
  const share = Math.max(1, Math.floor(dispatch.config.workerConcurrency * dispatch.config.destinationShare));
  const started = Date.now();
  await publishBacklog(dispatch, `${hanging.url}/hang`, ctx.plan.bodyBytes);
  const published = Date.now();
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  let settled = true;
  /** Ms from the end of publishing until `done`, or until `SETTLE_MS` passed (then the backlog did not settle). */
  const waitFor = async (done: () => Promise<boolean>) => {
    let met = await done();
    while (!met && Date.now() - published < SETTLE_MS) {
      await sleep(50);
      met = await done();
    }
    settled &&= met;
    return Date.now() - published;
  };
  try {
    let parked = 0;
    const settleMs = await waitFor(async () => {
      const [line] = await sql<{ due: number; parked: number }[]>`
        select count(*) filter (where due_at is not null)::int as due, count(*) filter (where destination_parked)::int as parked
        from dispatch.messages where destination = ${hanging.url}`;
      parked = line!.parked;
      return hanging.open() >= share && line!.due === 0;
    });
    // The line is the steady state measured, not the work of making it: vacuumed now, as scenario 5 vacuums its backlog,
    // so that autovacuum does not clean up the backlog's inserts and updates inside the window.
    await sql`vacuum analyze dispatch.messages`;
    // Nothing but the backlog has been written to the fresh database's message table: each was inserted, and each lined up was updated.
    const countedMs = await waitFor(async () => {
      const [counted] = await sql<{ inserted: number; updated: number }[]>`
        select n_tup_ins::int as inserted, n_tup_upd::int as updated from pg_stat_user_tables
        where schemaname = 'dispatch' and relname = 'messages'`;
      return counted!.inserted >= BACKLOG && counted!.updated >= parked;
    });
    return { backlog: BACKLOG, share, publishMs: published - started, settleMs, countedMs, settled, parked };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** `BACKLOG` messages to `url` through /v2/batch, `BATCH_ITEMS` a request, `BATCHES_IN_FLIGHT` requests at once. */
async function publishBacklog(dispatch: DispatchProcess, url: string, bodyBytes: number): Promise<void> {
  const batch = JSON.stringify(Array.from({ length: BATCH_ITEMS }, () => ({ destination: url, body: "x".repeat(bodyBytes) })));
  let sent = 0;
  const sender = async () => {
    while (sent < BACKLOG) {
      sent += BATCH_ITEMS;
      const response = await request(`${dispatch.url}/v2/batch`, {
        method: "POST",
        body: batch,
        headers: { authorization: `Bearer ${dispatch.token}`, "content-type": "application/json" },
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) {
        const logged = dispatch.problems().slice(-3).join("\n");
        throw new Error(`publishing the hanging destination's backlog: ${response.statusCode} ${text.slice(0, 200)}; Dispatch logged:\n${logged}`);
      }
    }
  };
  await Promise.all(Array.from({ length: BATCHES_IN_FLIGHT }, sender));
}
