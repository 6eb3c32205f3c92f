/**
 * A receiver in the bench process that notes when each request arrived, by
 * path, and answers 200 at once: what scenarios 8 and 9 measure at.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sleep } from "./stats";

export interface ArrivalReceiver {
  url: string;
  /** Arrival times (ms since the epoch) of the requests to `path`. */
  times(path: string): number[];
  /** Resolves once `count` requests to `path` arrived; rejects after `timeoutMs`. */
  waitFor(path: string, count: number, timeoutMs: number): Promise<number[]>;
  close(): Promise<void>;
}

export async function startArrivalReceiver(): Promise<ArrivalReceiver> {
  const arrivals = new Map<string, number[]>();
  const server = createServer((req, res) => {
    const at = Date.now();
    req.resume();
    req.on("end", () => {
      const path = req.url!.split("?")[0]!;
      arrivals.set(path, [...(arrivals.get(path) ?? []), at]);
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const times = (path: string) => arrivals.get(path) ?? [];
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    times,
    async waitFor(path, count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (times(path).length < count) {
        if (Date.now() > deadline) throw new Error(`only ${times(path).length} of ${count} requests to ${path} arrived`);
        await sleep(20);
      }
      return times(path);
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
