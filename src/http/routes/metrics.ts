/** `GET /metrics`: Prometheus text format (observability/metrics.ts); `createApp` puts the token check in front. */
import { Hono } from "hono";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";

const METRICS = operation({
  summary: "Metrics",
  description: "Prometheus text format; the README lists the series.",
  tag: "Operations",
  access: "metrics-token",
  // Series name every project's queues: the operator's (and the metrics token's), not a project's.
  shared: true,
  // Without the database the scrape still answers: dispatch_database_up 0 (observability/database-state.ts).
  database: false,
  responses: { 200: { description: "The metrics.", contentType: "text/plain; version=0.0.4" } },
});

export function metricsRoutes(deps: AppDeps) {
  return new Hono().get("/", METRICS.describe, async (c) => {
    const { metrics } = deps;
    return c.body(await metrics.text(), 200, { "Content-Type": metrics.contentType });
  });
}
