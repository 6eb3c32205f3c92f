/**
 * Scenario 2e, projects: 2b with its publishes spread over 10 projects (a
 * token each, taken in turn) against 2b in one project, in paired rounds
 * (the order swapped each round, as paired.ts does), so that the claim's
 * turns between projects show as a ratio of delivered/s and of CPU per
 * delivered message taken minutes, not hours, apart.
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { ACCESS_TOKENS_CHANNEL, tokenDigest } from "../src/domain/access-tokens/access-tokens";
import { deliveredRateWindow } from "./delivered-rate";
import { type BenchContext, measure, MESSAGES, type ScenarioResult, serviceResult, withDispatch } from "./scenarios";

/** Projects the spread run publishes to. */
export const PROJECTS = 10;

/** 2b in one project, then in `PROJECTS` (or the other way round), `rounds` times. */
export async function projectRounds(ctx: BenchContext, rounds: number): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [1, PROJECTS] : [PROJECTS, 1];
    for (const projects of order) results.push(await spread(ctx, projects, round));
  }
  return results;
}

/** 2b with its publishes spread over `projects` projects. */
function spread(ctx: BenchContext, projects: number, round: number): Promise<ScenarioResult> {
  const run = `s2e_${projects}_${round}`;
  const id = `2e-${projects}-projects-${round + 1}`;
  return withDispatch(ctx, run, async (dispatch, databaseUrl) => {
    const names = Array.from({ length: projects - 1 }, (_, i) => `bench-${i + 1}`);
    const tokens = [dispatch.token, ...(await makeProjects(databaseUrl, names))];
    const measured = await measure(ctx, dispatch, { ...deliveredRateWindow(ctx, run), databaseUrl, messageTable: MESSAGES, tokens });
    return serviceResult("dispatch", false, id, `2b over ${projects} project${projects === 1 ? "" : "s"}`, dispatch, measured);
  });
}

/** Makes the projects `names`, a full token each (as `dispatch project create` does), and returns the tokens. */
export async function makeProjects(databaseUrl: string, names: string[]): Promise<string[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const tokens: string[] = [];
    for (const name of names) {
      const token = `bench_${randomBytes(16).toString("hex")}`;
      await sql`insert into dispatch.projects (name) values (${name})`;
      await sql`insert into dispatch.access_tokens (name, project, digest, read_only) values (${name}, ${name}, ${tokenDigest(token)}, false)`;
      tokens.push(token);
    }
    // The API process takes new tokens up on this NOTIFY (domain/access-tokens).
    await sql`select pg_notify(${ACCESS_TOKENS_CHANNEL}, '')`;
    return tokens;
  } finally {
    await sql.end();
  }
}
