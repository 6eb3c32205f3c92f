/**
 * Scenario 9, schedule firing lateness: `count` every-minute schedules on one
 * `dispatch start --role all`, waited through one real tick (the next minute
 * boundary). Lateness is measured from the tick to the message's creation
 * (when the worker fired it, database clock) and to its arrival at the
 * receiver; every schedule must fire exactly once.
 */
import postgres from "postgres";
import { request } from "undici";
import { startArrivalReceiver } from "./arrivals";
import { type DispatchProcess, startDispatch } from "./dispatch";
import type { BenchContext } from "./scenarios";
import { type Percentiles, percentiles } from "./stats";

export interface ScheduleResult {
  schedules: number;
  fired: number;
  /** Tick → message created (the worker fired it), ms. */
  firedLateMs: Percentiles;
  /** Tick → arrival at the receiver, ms. */
  arrivedLateMs: Percentiles;
}

export async function scheduleLateness(ctx: BenchContext): Promise<ScheduleResult> {
  const count = ctx.plan.quick ? 50 : 200;
  const receiver = await startArrivalReceiver();
  const databaseUrl = await ctx.server.createDatabase("schedules");
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  let dispatch: DispatchProcess | null = null;
  try {
    dispatch = await startDispatch(databaseUrl, "all");
    // At least 5 s before the tick, so that creating them does not race it.
    const untilTick = 60_000 - (Date.now() % 60_000);
    if (untilTick < 5_000) await new Promise((resolve) => setTimeout(resolve, untilTick + 100));
    for (let i = 0; i < count; i++) await create(dispatch, `${receiver.url}/s${i % 10}`, `bench-${i}`);
    const tick = Math.ceil(Date.now() / 60_000) * 60_000;
    ctx.log(`  ${count} schedules created; waiting ${((tick - Date.now()) / 1000).toFixed(0)} s for the tick`);
    const paths = Array.from({ length: 10 }, (_, i) => `/s${i}`);
    await Promise.all(paths.map((path) => receiver.waitFor(path, count / 10, tick - Date.now() + 30_000)));
    const rows = await sql<{ created: Date }[]>`select created_at as created from dispatch.messages where schedule_id is not null`;
    const arrivals = paths.flatMap((path) => receiver.times(path));
    return {
      schedules: count,
      fired: rows.length,
      firedLateMs: percentiles(rows.map((row) => row.created.getTime() - tick)),
      arrivedLateMs: percentiles(arrivals.map((at) => at - tick)),
    };
  } finally {
    await sql.end();
    await dispatch?.stop();
    await receiver.close();
    await ctx.server.dropDatabase(databaseUrl);
  }
}

async function create(dispatch: DispatchProcess, destination: string, id: string): Promise<void> {
  const response = await request(`${dispatch.url}/v2/schedules/${destination}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${dispatch.token}`, "Svc-Cron": "* * * * *", "Svc-Schedule-Id": id },
    body: "tick",
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`schedule create: ${response.statusCode} ${text}`);
}
