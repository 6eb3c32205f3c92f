/**
 * Scenario 2g, tracing's cost: 2b with tracing off against 2b with every
 * publish and attempt traced (`OTEL_TRACES_SAMPLER=always_on`, exported as
 * OTLP/HTTP protobuf to a sink on 127.0.0.1 that reads and drops what it is
 * sent), in paired rounds with the order swapped each round (as paired.ts
 * does). Off, tracing is a flag checked where a span would start: its rows,
 * statements and WAL per message are the figures to compare with earlier runs.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { deliveredRateWindow } from "./delivered-rate";
import { startDispatch } from "./dispatch";
import { type BenchContext, measure, MESSAGES, type ScenarioResult, serviceResult, withService } from "./scenarios";

/** 2b untraced then traced (or the other way round), `rounds` times. */
export async function tracingRounds(ctx: BenchContext, rounds: number): Promise<ScenarioResult[]> {
  const sink = await startSink();
  try {
    const results: ScenarioResult[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const traced of order) results.push(await delivered(ctx, traced, round, sink.url));
    }
    return results;
  } finally {
    await sink.close();
  }
}

/** 2b with tracing on or off. */
function delivered(ctx: BenchContext, traced: boolean, round: number, sinkUrl: string): Promise<ScenarioResult> {
  const run = `s2g_${traced ? "on" : "off"}_${round}`;
  const id = `2g-tracing-${traced ? "on" : "off"}-${round + 1}`;
  const env: Record<string, string> = traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: "always_on" } : {};
  return withService(ctx, run, (url) => startDispatch(url, "all", env), async (dispatch, databaseUrl) => {
    const measured = await measure(ctx, dispatch, { ...deliveredRateWindow(ctx, run), databaseUrl, messageTable: MESSAGES });
    return serviceResult("dispatch", false, id, `2b with tracing ${traced ? "on (every span sampled)" : "off"}`, dispatch, measured);
  });
}

/** An OTLP/HTTP endpoint that reads every export to its end and answers 200. */
async function startSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
