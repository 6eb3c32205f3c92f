/** `GET /metrics`: Prometheus text format (observability/metrics.ts); `createApp` puts the token check in front. */
import { Hono } from "hono";
import type { AppDeps } from "../deps";

export function metricsRoutes(deps: AppDeps) {
  return new Hono().get("/", async (c) => {
    const { registry } = deps.metrics;
    return c.body(await registry.metrics(), 200, { "Content-Type": registry.contentType });
  });
}
