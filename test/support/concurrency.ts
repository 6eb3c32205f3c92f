/**
 * A receiver that holds each request for a while and counts how many it
 * holds at once, per path: what a destination sees of parallelism limits;
 * and the busiest window of a set of arrival times: what it sees of rates.
 */
import { type Receiver, type Responder, sleep, useReceiver } from "./receiver";

export interface CountingReceiver {
  receiver: Receiver;
  /** Most requests to `path` held at once so far. */
  maxInFlight(path: string): number;
}

/** A responder answering 200 after `holdMs`, and the most requests per path it has held at once. */
function counting(holdMs: number): { responder: Responder; maxInFlight(path: string): number } {
  const current = new Map<string, number>();
  const max = new Map<string, number>();
  const responder: Responder = async (request) => {
    const now = (current.get(request.path) ?? 0) + 1;
    current.set(request.path, now);
    max.set(request.path, Math.max(max.get(request.path) ?? 0, now));
    await sleep(holdMs);
    current.set(request.path, current.get(request.path)! - 1);
    return { status: 200, body: "ok" };
  };
  return { responder, maxInFlight: (path) => max.get(path) ?? 0 };
}

/**
 * A receiver for the whole test file (started and closed as `useReceiver`
 * does) that answers 200 after `holdMs`, counting concurrent requests per path.
 */
export function useCountingReceiver(holdMs: number): CountingReceiver {
  const { responder, maxInFlight } = counting(holdMs);
  return { receiver: useReceiver(responder), maxInFlight };
}
