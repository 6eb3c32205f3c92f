/**
 * Health, without a token (load balancers, supervisors and orchestrators call it):
 *
 * - `GET /health/live`: the process is up and answering (200).
 * - `GET /health/ready`: it can do its work: the database answers, its
 *   migrations are the ones this build carries, and — where this process runs
 *   a worker — the worker's heartbeat is fresh. 200 or 503, each dependency
 *   reported.
 * - `GET /health`: the database answers (200 or 503), as before the two above.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { type MigrationStatus, migrationStatus } from "../../db/migrate";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";

type Check = "up" | "down";

const READY = v.object({
  status: v.picklist(["ok", "unavailable"]),
  checks: v.object({
    database: v.picklist(["up", "down"]),
    migrations: v.pipe(v.string(), v.description("`current`, `behind`, `ahead` or `unknown`.")),
    worker: v.picklist(["fresh", "stale", "none", "unknown"]),
  }),
});
const HEALTH = operation({
  summary: "Database health",
  tag: "Operations",
  access: "public",
  responses: { 200: "The database answers.", 503: "The database does not answer." },
});
const LIVE = operation({
  summary: "Liveness",
  description: "The process is up and answering.",
  tag: "Operations",
  access: "public",
  database: false,
  responses: { 200: { description: "Up.", json: v.object({ status: v.literal("ok") }) } },
});
const READINESS = operation({
  summary: "Readiness",
  description: "The database answers, its migrations are this build's, and this process's worker (if it runs one) has a fresh heartbeat.",
  tag: "Operations",
  access: "public",
  responses: { 200: { description: "Ready.", json: READY }, 503: { description: "Not ready: the checks say why.", json: READY } },
});

export function healthRoutes(deps: AppDeps) {
  const database = () =>
    deps.sql`select 1`.then(
      (): Check => "up",
      (error: unknown): Check => {
        deps.availability.failed(error);
        return "down";
      },
    );
  return new Hono()
    .get("/", HEALTH.describe, async (c) => {
      const db = await database();
      return c.json({ status: db === "up" ? "ok" : "unavailable", database: db }, db === "up" ? 200 : 503);
    })
    .get("/live", LIVE.describe, (c) => c.json({ status: "ok" }))
    .get("/ready", READINESS.describe, async (c) => {
      const db = await database();
      const migrations: MigrationStatus | "unknown" = db === "up" ? await migrationStatus(deps.sql).catch(() => "unknown" as const) : "unknown";
      const worker = await workerCheck(deps, db);
      const ready = db === "up" && migrations === "current" && worker !== "stale";
      return c.json({ status: ready ? "ok" : "unavailable", checks: { database: db, migrations, worker } }, ready ? 200 : 503);
    });
}

/** `fresh` or `stale` for this process's worker; `none` when it runs none, `unknown` without a database. */
async function workerCheck(deps: AppDeps, db: Check): Promise<"fresh" | "stale" | "none" | "unknown"> {
  if (!deps.workerHeartbeatId) return "none";
  if (db === "down") return "unknown";
  const [row] = await deps.sql<{ fresh: boolean }[]>`
    select heartbeat_at > now() - ${deps.config.workerDeadAfterMs} * interval '1 millisecond' as fresh
    from dispatch.workers where id = ${deps.workerHeartbeatId}`;
  return row?.fresh ? "fresh" : "stale";
}
