/**
 * A real HTTP receiver on 127.0.0.1 that records every request it gets and
 * answers as the test tells it to: one for a whole test file (`useReceiver`),
 * one for a test (`startReceiver`, `receiverPool`).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";
import { track } from "./leaks";

/** A request as the receiver got it. */
export interface Received {
  method: string;
  /** Path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** What the receiver answers. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
}

export type Responder = (request: Received, index: number) => Reply | Promise<Reply>;

/** A running receiver. */
export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Changes how later requests are answered. */
  respond(responder: Responder): void;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1; by default it answers 200 "ok". */
export async function startReceiver(responder: Responder = () => ({ status: 200, body: "ok" })): Promise<Receiver> {
  const requests: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let respond = responder;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const received = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
      const index = requests.push(received) - 1;
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
      const reply = await respond(received, index);
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, reply.headers ?? {});
      res.end(reply.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const stopped = track(`a receiver on port ${port}`);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    respond: (next) => void (respond = next),
    waitFor(count, timeoutMs = 15_000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(requests)) });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => (stopped(), resolve()));
      }),
  };
}

/**
 * A receiver for the whole test file: started in `beforeAll`, closed in
 * `afterAll`. Call it at the top of the file, after `useDispatch` (hooks run
 * in the order they were registered, and the after-hooks in reverse, so the
 * receiver is closed before the service stops); the object it returns reads
 * the running receiver. A receiver the service's configuration names (an LLM
 * provider's URL) is the exception: call it before `useDispatch`.
 */
export function useReceiver(responder?: Responder): Receiver {
  let started: Receiver | null = null;
  beforeAll(async () => {
    started = await startReceiver(responder);
  });
  afterAll(async () => {
    await started?.close();
    started = null;
  });
  const running = () => {
    if (started === null) throw new Error("the file's receiver is not running (useReceiver starts it in beforeAll)");
    return started;
  };
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get requests() {
      return running().requests;
    },
    respond: (next) => running().respond(next),
    waitFor: (count, timeoutMs) => running().waitFor(count, timeoutMs),
    close: () => running().close(),
  };
}

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Receivers started by one test and closed after it (call `closeAll` in `afterEach`). */
export function receiverPool() {
  const started: Receiver[] = [];
  return {
    async start(responder?: Responder): Promise<Receiver> {
      const receiver = await startReceiver(responder);
      started.push(receiver);
      return receiver;
    },
    closeAll: () => Promise.all(started.splice(0).map((receiver) => receiver.close())),
  };
}

/** `receiver()`: a receiver of its own for one test, closed after it (an `afterEach`). Call at the top of the file. */
export function useReceivers(): (responder?: Responder) => Promise<Receiver> {
  const pool = receiverPool();
  afterEach(async () => {
    await pool.closeAll();
  });
  return (responder) => pool.start(responder);
}
