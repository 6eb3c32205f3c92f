/**
 * The minimal pipeline (bench/pipeline.ts) run through the scenarios of
 * Dispatch where they apply, in the same run, with the same load generator
 * and receiver: publish with delivery (1), publish alone (the API-only
 * counterpart), maximum delivered rate (2b) and end-to-end at a fixed rate (2a).
 */
import postgres from "postgres";
import { startServiceProcess } from "./dispatch";
import type { Pacing } from "./load";
import { type BenchContext, measure, type ScenarioResult, serviceResult, withService } from "./scenarios";

const TABLE = "pipeline.messages";

/** Starts the pipeline on `databaseUrl`; `workers: false` leaves only its publish server. */
export function startPipeline(databaseUrl: string, workers = true) {
  return startServiceProcess(databaseUrl, ["--import", "tsx", "bench/pipeline.ts", ...(workers ? [] : ["--no-workers"])]);
}

/** Every pipeline scenario, in order. */
export async function pipelineScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { plan, receiverUrl } = ctx;
  const closed: Pacing = { kind: "closed", concurrency: plan.concurrency };
  const url = await ctx.server.createDatabase("pipeline");
  try {
    const publish = await withService(ctx, "pipeline", startPipeline, async (service) => {
      const run = "p1";
      const m = await measure(ctx, service, {
        run, databaseUrl: url, messageTable: TABLE, destination: `${receiverUrl}/in/${run}/0`, pacing: closed,
        durationMs: plan.windowMs, endpoints: 1, drainMs: plan.publishDrainMs,
      });
      return serviceResult("pipeline", false, "pipeline-1-publish", "Minimal pipeline: publish throughput (empty table)", service, m);
    }, url);
    await cancelLeftovers(url);
    const deliver = await withService(ctx, "pipeline", startPipeline, async (service) => {
      const run = "p2b";
      const m = await measure(ctx, service, {
        run, databaseUrl: url, messageTable: TABLE, destination: `${receiverUrl}/in/${run}/0`, pacing: closed,
        durationMs: plan.windowMs, endpoints: 1, drainMs: plan.drainMs,
      });
      return serviceResult("pipeline", false, "pipeline-2b-delivered", "Minimal pipeline: maximum delivered rate", service, m);
    }, url);
    return [publish, deliver, await publishOnly(ctx), await endToEnd(ctx)];
  } finally {
    await ctx.server.dropDatabase(url);
  }
}

/** The pipeline's publish server alone (no workers), the counterpart of Dispatch's API role. */
function publishOnly(ctx: BenchContext): Promise<ScenarioResult> {
  const { plan } = ctx;
  return withService(ctx, "pipeline_api", (url) => startPipeline(url, false), async (service, databaseUrl) => {
    const run = "p1_api";
    const m = await measure(ctx, service, {
      run, databaseUrl, messageTable: TABLE, publishOnly: true, destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "closed", concurrency: plan.concurrency }, durationMs: plan.windowMs, endpoints: 1, drainMs: 0,
    });
    return serviceResult("pipeline", true, "pipeline-1-publish-only", "Minimal pipeline: publish throughput, no workers", service, m);
  });
}

/** Scenario 2a's shape: publish → arrival at a fixed offered rate. */
function endToEnd(ctx: BenchContext): Promise<ScenarioResult> {
  const { plan } = ctx;
  return withService(ctx, "pipeline_e2e", startPipeline, async (service, databaseUrl) => {
    const run = "p2a";
    const m = await measure(ctx, service, {
      run, databaseUrl, messageTable: TABLE, destination: `${ctx.receiverUrl}/in/${run}/0`,
      pacing: { kind: "open", rate: plan.e2eRate, maxInFlight: 512 }, durationMs: plan.windowMs, endpoints: 1, drainMs: plan.drainMs,
    });
    return serviceResult("pipeline", false, "pipeline-2a-e2e", `Minimal pipeline: end-to-end at ${plan.e2eRate} msg/s offered`, service, m);
  });
}

/** Marks rows scenario 1 left undelivered as canceled, so 2b starts with nothing to claim. */
async function cancelLeftovers(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`update pipeline.messages set state = 'canceled' where state in ('created', 'active')`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
