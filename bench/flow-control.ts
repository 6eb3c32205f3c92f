/**
 * Scenario 8, flow control, on one `dispatch start --role all` warmed up by
 * `unlimited` unmeasured deliveries:
 *
 * - rate accuracy: `messages` messages of one key limited to `rate` per
 *   second, published at once; the sustained rate against the limit (the
 *   first `rate` go at once, so: the arrivals after them over the time from
 *   the first arrival to the last), and the busiest one-second window (must
 *   not exceed the limit);
 * - isolation: `unlimited` unkeyed messages delivered alone, then again while a backlog of
 *   `throttled` messages waits on a key limited to one a minute; the second
 *   delivered rate over the first (1.0: the throttled key costs the others nothing).
 */
import { request } from "undici";
import { type ArrivalReceiver, startArrivalReceiver } from "./arrivals";
import { type DispatchProcess, startDispatch } from "./dispatch";
import type { BenchContext } from "./scenarios";
import { busiestWindow } from "../test/support/sliding-window";

export interface FlowControlResult {
  rate: number;
  rateMessages: number;
  /** Messages per second sustained: arrivals after the first `rate`, over first to last arrival. */
  achievedRate: number;
  /** achievedRate / rate. */
  rateAccuracy: number;
  /** Most arrivals in any one-second window (must be ≤ rate). */
  busiestSecond: number;
  unlimited: number;
  throttled: number;
  /** Unkeyed messages delivered per second, alone and beside the throttled backlog. */
  unlimitedAlonePerSecond: number;
  unlimitedBesideThrottledPerSecond: number;
  /** Throttled messages delivered while the unkeyed ones went by (1 per minute allows 1). */
  throttledDelivered: number;
}

export async function flowControl(ctx: BenchContext): Promise<FlowControlResult> {
  const rate = 50;
  const rateMessages = ctx.plan.quick ? 150 : 250;
  const unlimited = ctx.plan.quick ? 1000 : 10_000;
  const throttled = 1000;
  const receiver = await startArrivalReceiver();
  const databaseUrl = await ctx.server.createDatabase("flowcontrol");
  let dispatch: DispatchProcess | null = null;
  try {
    dispatch = await startDispatch(databaseUrl, "all");
    // Unmeasured: a process fresh from start-up (JIT, connections) is slower than it will be.
    await deliveredRate(dispatch, receiver, "/warm-up", unlimited);
    await publishAll(dispatch, receiver, "/rated", rateMessages, { "Svc-Flow-Control-Key": "rated", "Svc-Flow-Control-Value": `rate=${rate}, period=1s` });
    const rated = await receiver.waitFor("/rated", rateMessages, (rateMessages / rate) * 1000 + 30_000);
    const achievedRate = ((rated.length - rate) * 1000) / (Math.max(...rated) - Math.min(...rated));

    const alone = await deliveredRate(dispatch, receiver, "/alone", unlimited);
    await publishAll(dispatch, receiver, "/throttled", throttled, { "Svc-Flow-Control-Key": "throttled", "Svc-Flow-Control-Value": "rate=1, period=1m" });
    const beside = await deliveredRate(dispatch, receiver, "/beside", unlimited);
    return {
      rate,
      rateMessages,
      achievedRate,
      rateAccuracy: achievedRate / rate,
      busiestSecond: busiestWindow(rated, 1000),
      unlimited,
      throttled,
      unlimitedAlonePerSecond: alone,
      unlimitedBesideThrottledPerSecond: beside,
      throttledDelivered: receiver.times("/throttled").length,
    };
  } finally {
    await dispatch?.stop();
    await receiver.close();
    await ctx.server.dropDatabase(databaseUrl);
  }
}

/** Publishes `count` messages to `path` through /v2/batch (100 a request) and returns the delivered rate, first publish to last arrival. */
async function deliveredRate(dispatch: DispatchProcess, receiver: ArrivalReceiver, path: string, count: number): Promise<number> {
  const started = Date.now();
  await publishAll(dispatch, receiver, path, count, {});
  const times = await receiver.waitFor(path, count, 120_000);
  return (count * 1000) / (Math.max(...times) - started);
}

async function publishAll(dispatch: DispatchProcess, receiver: ArrivalReceiver, path: string, count: number, headers: Record<string, string>) {
  const batches: Promise<void>[] = [];
  for (let sent = 0; sent < count; sent += 100) {
    const items = Array.from({ length: Math.min(100, count - sent) }, () => ({ destination: `${receiver.url}${path}`, headers, body: "x" }));
    batches.push(post(`${dispatch.url}/v2/batch`, JSON.stringify(items), dispatch.token));
    if (batches.length === 4) await Promise.all(batches.splice(0));
  }
  await Promise.all(batches);
}

async function post(url: string, body: string, token: string): Promise<void> {
  const response = await request(url, { method: "POST", body, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" } });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`POST ${url}: ${response.statusCode} ${text.slice(0, 200)}`);
}
