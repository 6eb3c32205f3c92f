/**
 * The peers (webhook deliverers on pg-boss and on graphile-worker, this
 * folder) run through the scenarios the minimal pipeline runs
 * (bench/pipeline-scenarios.ts), with the same load generator and receiver:
 * publish with delivery (1) then the maximum delivered rate (2b) on one fresh
 * database, and end-to-end at the fixed rate (2a) on another.
 */
import postgres from "postgres";
import { startServiceProcess } from "../dispatch";
import { type BenchContext, measure, type ScenarioResult, serviceResult, withService } from "../scenarios";
import { type Peer, PEERS } from "./peers";

/** Scenarios 1, 2b and 2a of every peer, in turn. */
export async function peerScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const peer of PEERS) results.push(...(await publishThenDeliver(ctx, peer)), await endToEnd(ctx, peer));
  return results;
}

const start = (peer: Peer) => (databaseUrl: string) => startServiceProcess(databaseUrl, ["--import", "tsx", peer.script]);

/** Scenario 1 then, its leftovers dropped, 2b, on one fresh database. */
async function publishThenDeliver(ctx: BenchContext, peer: Peer): Promise<ScenarioResult[]> {
  const { plan } = ctx;
  const url = await ctx.server.createDatabase(peer.id);
  try {
    const window = (run: string, drainMs: number) => ({
      run, databaseUrl: url, messageTable: peer.jobTable, destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "closed", concurrency: plan.concurrency } as const, durationMs: plan.windowMs, endpoints: 1, drainMs,
    });
    const publish = await withService(ctx, peer.id, start(peer), async (service) => {
      const m = await measure(ctx, service, window(`${peer.id}1`, plan.publishDrainMs));
      return serviceResult(peer.service, false, `${peer.id}-1-publish`, `${peer.service}: publish throughput (empty table)`, service, m);
    }, url);
    const dropped = await dropLeftovers(url, peer);
    if (dropped > 0) publish.notes.push(`${dropped} jobs still unfinished after the drain allowance were deleted before 2b`);
    const deliver = await withService(ctx, peer.id, start(peer), async (service) => {
      const m = await measure(ctx, service, window(`${peer.id}2b`, plan.drainMs));
      return serviceResult(peer.service, false, `${peer.id}-2b-delivered`, `${peer.service}: maximum delivered rate`, service, m);
    }, url);
    return [publish, deliver];
  } finally {
    await ctx.server.dropDatabase(url);
  }
}

/** Scenario 2a's shape: publish → arrival at the plan's fixed offered rate, on a fresh database. */
function endToEnd(ctx: BenchContext, peer: Peer): Promise<ScenarioResult> {
  const { plan } = ctx;
  return withService(ctx, `${peer.id}_e2e`, start(peer), async (service, databaseUrl) => {
    const run = `${peer.id}2a`;
    const m = await measure(ctx, service, {
      run, databaseUrl, messageTable: peer.jobTable, destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "open", rate: plan.e2eRate, maxInFlight: 512 }, durationMs: plan.windowMs, endpoints: 1, drainMs: plan.drainMs,
    });
    return serviceResult(peer.service, false, `${peer.id}-2a-e2e`, `${peer.service}: end-to-end at ${plan.e2eRate} msg/s offered`, service, m);
  });
}

/** Deletes the jobs a stopped peer left unfinished; returns how many. */
async function dropLeftovers(databaseUrl: string, peer: Peer): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return (await peer.dropLeftovers(sql)).count;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
