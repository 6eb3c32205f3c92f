/**
 * Scenario 7, large messages: 5 MiB bodies through a Dispatch whose
 * `DISPATCH_MAX_MESSAGE_SIZE` is raised to 8 MiB. Measured: publish and
 * publish → arrival one at a time, against the same body POSTed straight to
 * the receiver in the same run (the baseline: what moving 5 MiB over loopback
 * costs); memory per large message in flight (RSS with `inFlight` deliveries
 * held open at the receiver, less RSS before); and the usual per-message
 * costs (CPU, rows, WAL). The receiver is this process's own, checking every
 * body's length.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { type Costs, openCostWindow } from "./costs";
import { type DispatchProcess, startDispatch } from "./dispatch";
import { MESSAGES, type BenchContext } from "./scenarios";
import { type Percentiles, percentiles, sleep } from "./stats";

const MiB = 1024 * 1024;

/** What scenario 7 measured. */
export interface LargeMessages {
  bodyBytes: number;
  maxMessageBytes: number;
  /** Messages sent one at a time. */
  serial: number;
  /** Publish request → 200, ms. */
  publishMs: Percentiles;
  /** Publish request → the receiver has the whole body, ms. */
  endToEndMs: Percentiles;
  /** The baseline: the same body POSTed straight to the receiver, ms. */
  directPostMs: Percentiles;
  /** Deliveries held open at the receiver at once for the memory figure. */
  inFlight: number;
  idleRssMiB: number;
  heldRssMiB: number;
  /** (held − idle) / inFlight. */
  rssPerInFlightMiB: number;
  /** Bodies that arrived with the wrong length (must be 0). */
  corrupt: number;
  costs: Costs;
}

/** Runs scenario 7 on a fresh database (dropped afterwards). */
export async function largeMessages(ctx: BenchContext): Promise<LargeMessages> {
  const serial = ctx.plan.quick ? 4 : 10;
  const inFlight = ctx.plan.quick ? 4 : 8;
  const bodyBytes = 5 * MiB;
  const maxMessageBytes = 8 * MiB;
  // Random base64 text: like a payload of encoded data, it does not compress, so TOAST stores all of it.
  const body = Buffer.from(randomBytes((bodyBytes / 4) * 3).toString("base64"));
  const receiver = await startLargeReceiver(bodyBytes);
  const databaseUrl = await ctx.server.createDatabase("large");
  let dispatch: DispatchProcess | null = null;
  try {
    dispatch = await startDispatch(databaseUrl, "all", { DISPATCH_MAX_MESSAGE_SIZE: String(maxMessageBytes) });
    const service = dispatch;
    const directPostMs: number[] = [];
    for (let i = 0; i < serial; i++) {
      const started = performance.now();
      await receiver.arrival(`direct-${i}`, () => post(`${receiver.url}/direct-${i}`, body, {}));
      directPostMs.push(performance.now() - started);
    }
    const window = await openCostWindow(ctx.server, databaseUrl, service.pids, MESSAGES);
    const publishMs: number[] = [];
    const endToEndMs: number[] = [];
    for (let i = 0; i < serial; i++) {
      const started = performance.now();
      await receiver.arrival(`serial-${i}`, async () => {
        await publish(service, `${receiver.url}/serial-${i}`, body);
        publishMs.push(performance.now() - started);
      });
      endToEndMs.push(performance.now() - started);
    }
    await sleep(500);
    const idleRssMiB = service.peakRss().sampledMiB;
    service.resetPeak();
    receiver.hold(true);
    const held = Array.from({ length: inFlight }, (_, i) => receiver.arrival(`held-${i}`, () => publish(service, `${receiver.url}/held-${i}`, body)));
    await receiver.heldCount(inFlight);
    await sleep(300);
    const heldRssMiB = service.peakRss().sampledMiB;
    receiver.hold(false);
    await Promise.all(held);
    window.serviceDone();
    await service.stop();
    dispatch = null;
    const costs = await window.close(serial + inFlight, "delivery");
    return {
      bodyBytes,
      maxMessageBytes,
      serial,
      publishMs: percentiles(publishMs),
      endToEndMs: percentiles(endToEndMs),
      directPostMs: percentiles(directPostMs),
      inFlight,
      idleRssMiB,
      heldRssMiB,
      rssPerInFlightMiB: (heldRssMiB - idleRssMiB) / inFlight,
      corrupt: receiver.corrupt(),
      costs,
    };
  } finally {
    await dispatch?.stop();
    await receiver.close();
    await ctx.server.dropDatabase(databaseUrl);
  }
}

async function publish(dispatch: DispatchProcess, destination: string, body: Buffer): Promise<void> {
  await post(`${dispatch.url}/v2/publish/${destination}`, body, { Authorization: `Bearer ${dispatch.token}`, "Svc-Retries": "0" });
}

async function post(url: string, body: Buffer, headers: Record<string, string>): Promise<void> {
  const response = await request(url, { method: "POST", body, headers: { "Content-Type": "application/octet-stream", ...headers } });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`POST ${url}: ${response.statusCode} ${text.slice(0, 200)}`);
}

/** A receiver that checks body lengths and can hold its answers (deliveries stay in flight). */
async function startLargeReceiver(expectedBytes: number) {
  const waiting = new Map<string, () => void>();
  const heldAnswers: (() => void)[] = [];
  let holding = false;
  let corrupt = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let length = 0;
    req.on("data", (chunk: Buffer) => void (length += chunk.length));
    req.on("end", () => {
      if (length !== expectedBytes) corrupt++;
      const answer = () => {
        res.end("ok");
        waiting.get(req.url!.slice(1))?.();
      };
      if (holding) heldAnswers.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Runs `send` and resolves once the receiver has answered the request for `path`. */
    async arrival(path: string, send: () => Promise<void>): Promise<void> {
      const arrived = new Promise<void>((resolve) => waiting.set(path, resolve));
      await send();
      await arrived;
    },
    hold(on: boolean) {
      holding = on;
      if (!on) heldAnswers.splice(0).forEach((answer) => answer());
    },
    async heldCount(count: number) {
      for (let i = 0; i < 600 && heldAnswers.length < count; i++) await sleep(50);
      if (heldAnswers.length < count) throw new Error(`only ${heldAnswers.length} of ${count} large deliveries arrived`);
    },
    corrupt: () => corrupt,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
