/**
 * Workflow runs as the SDK drives them (workflow-protocol.md §9, §11):
 * `DELETE /v2/workflows/runs/{id}?cancel=false|true` ends a run (idempotent),
 * `GET /v2/workflows/runs/{id}` serves its step list (lazy fetch).
 */
import { Hono } from "hono";
import { AppError } from "../../domain/errors";
import { finishRun, type WorkflowSettings } from "../../domain/workflows/lifecycle";
import { findActiveRun, findLatestRun, stepList } from "../../domain/workflows/runs";
import type { AppDeps } from "../deps";

/** Routes of a single workflow run. */
export function workflowRunRoutes(deps: AppDeps) {
  const settings: WorkflowSettings = { limits: deps.config, deduplicationWindowMs: deps.config.deduplicationWindowMs };
  return new Hono()
    .delete("/:id", async (c) => {
      const id = c.req.param("id");
      const cancel = c.req.query("cancel") === "true";
      const response = cancel ? null : await c.req.text();
      await deps.sql.begin(async (tx) => {
        const run = await findLatestRun(tx, id);
        if (!run) throw new AppError(404, `workflow run ${id} not found`);
        // Ending an ended run again is a no-op: the SDK may repeat the call.
        if (run.state === "RUN_STARTED") {
          await finishRun(tx, run, cancel ? "RUN_CANCELED" : "RUN_SUCCESS", response === "" ? null : response, settings);
        }
      });
      return c.json({});
    })
    .get("/:id", async (c) => {
      const id = c.req.param("id");
      const steps = await deps.sql.begin(async (tx) => {
        const run = await findActiveRun(tx, id);
        if (!run) throw new AppError(404, `workflow run ${id} not found or ended`);
        return stepList(tx, run.pk);
      });
      return c.json(steps);
    });
}
