/**
 * `GET /health`: 200 when the database answers, 503 when it does not, with
 * each dependency reported. No token: load balancers and supervisors call it.
 */
import { Hono } from "hono";
import type { AppDeps } from "../deps";

export function healthRoutes(deps: AppDeps) {
  return new Hono().get("/", async (c) => {
    const database = await deps.sql`select 1`.then(
      () => "up" as const,
      (error: unknown) => {
        deps.availability.failed(error);
        return "down" as const;
      },
    );
    return c.json({ status: database === "up" ? "ok" : "unavailable", database }, database === "up" ? 200 : 503);
  });
}
