/**
 * A receiver that holds each request for a while and counts how many it
 * holds at once, per path: what a destination sees of parallelism limits.
 */
import { type Receiver, sleep, startReceiver } from "./receiver";

export interface CountingReceiver {
  receiver: Receiver;
  /** Most requests to `path` held at once so far. */
  maxInFlight(path: string): number;
}

/** Answers 200 after `holdMs`, counting concurrent requests per path. */
export async function startCountingReceiver(holdMs: number): Promise<CountingReceiver> {
  const current = new Map<string, number>();
  const max = new Map<string, number>();
  const receiver = await startReceiver(async (request) => {
    const now = (current.get(request.path) ?? 0) + 1;
    current.set(request.path, now);
    max.set(request.path, Math.max(max.get(request.path) ?? 0, now));
    await sleep(holdMs);
    current.set(request.path, current.get(request.path)! - 1);
    return { status: 200, body: "ok" };
  });
  return { receiver, maxInFlight: (path) => max.get(path) ?? 0 };
}

/** The most arrivals within any one window: the bench's measure, used by the tests too. */
export { busiestWindow } from "../../bench/stats";
