/**
 * A destination that hangs: a node:http server on 127.0.0.1 (its own port,
 * so its own origin) that reads every request and never answers it. It notes
 * when each request came and when its connection went, so a scenario can ask
 * how many it held open at any instant. `close` ends every held connection:
 * nothing it holds outlives the scenario.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface HangingDestination {
  /** Its origin, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Requests held open now. */
  open(): number;
  /** Requests held open at `at` (ms since the epoch). */
  openAt(at: number): number;
  /** Most requests held open at once so far. */
  peak(): number;
  /** Requests received so far. */
  received(): number;
  /** Drops every held connection and stops listening. */
  close(): Promise<void>;
}

/** One request: when it came, and when its connection closed (null while held). */
interface Held {
  at: number;
  closedAt: number | null;
}

export async function startHangingDestination(): Promise<HangingDestination> {
  const requests: Held[] = [];
  let open = 0;
  let peak = 0;
  const server = createServer((req, res) => {
    const held: Held = { at: Date.now(), closedAt: null };
    requests.push(held);
    peak = Math.max(peak, ++open);
    req.resume();
    res.once("close", () => {
      held.closedAt = Date.now();
      open--;
    });
  });
  // Node ends a request whose body has not arrived after requestTimeout; these bodies arrive, and no answer is ever due.
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => open,
    openAt: (at) => requests.filter((r) => r.at <= at && (r.closedAt === null || r.closedAt > at)).length,
    peak: () => peak,
    received: () => requests.length,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
