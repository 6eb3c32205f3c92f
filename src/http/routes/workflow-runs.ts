/**
 * Workflow runs as the SDK drives them (docs/workflow-protocol.md §9, §11):
 * `DELETE /v2/workflows/runs/{id}?cancel=false|true` ends a run (idempotent),
 * `GET /v2/workflows/runs/{id}` serves its step list (lazy fetch), and
 * `DELETE /v2/workflows/runs` cancels runs in bulk (docs/hosted-api.md §13.1).
 */
import { Hono } from "hono";
import { AppError, badRequest } from "../../domain/errors";
import { messageSettings, parseBoolean } from "../../domain/publish/options";
import { cancelRuns, type RunCancelSelection } from "../../domain/workflows/cancel";
import { finishRun } from "../../domain/workflows/lifecycle";
import { findActiveRun, findLatestRun, stepList } from "../../domain/workflows/runs";
import { textOf } from "../body";
import type { AppDeps } from "../deps";
import { bulkParams, integerParam, listParam, type Params, singleParam, timeRangeParams } from "../query";

const CANCEL_PARAMETERS = [
  "workflowRunIds", "workflowUrl", "workflowUrlExactMatch", "workflowUrlStartingWith", "urlStartingWith", "fromDate",
  "toDate", "callerIp", "callerIP", "flowControlKey", "label", "host", "path", "count",
];

/** Routes of a single workflow run. */
export function workflowRunRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  return new Hono()
    .delete("/", async (c) => {
      const selection = cancelSelection(await bulkParams(c, CANCEL_PARAMETERS));
      return c.json({ cancelled: await deps.sql.begin((tx) => cancelRuns(tx, selection, settings)) });
    })
    .delete("/:id", async (c) => {
      const id = c.req.param("id");
      const cancel = c.req.query("cancel") === "true";
      const response = cancel ? null : textOf(c, deps.config.maxMessageBytes);
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

/**
 * Run ids (the filters are then ignored), else the filters and `count`
 * (default 100). `workflowUrl` matches as a prefix unless
 * `workflowUrlExactMatch=true`; the legacy body `{"workflowUrl": prefix}` and
 * `urlStartingWith` are prefixes too.
 */
function cancelSelection(params: Params): RunCancelSelection {
  const runIds = listParam(params, ["workflowRunIds"]);
  if (runIds !== null) return { runIds };
  const exact = parseBoolean(singleParam(params, "workflowUrlExactMatch") ?? undefined, "workflowUrlExactMatch");
  const prefixes = listParam(params, ["workflowUrlStartingWith", "urlStartingWith"], false);
  const urls = listParam(params, ["workflowUrl"], false);
  if (prefixes !== null && urls !== null) throw badRequest("workflowUrl and workflowUrlStartingWith are mutually exclusive");
  return {
    filter: {
      workflowUrl: urls ?? prefixes ?? undefined,
      urlPrefix: !(urls !== null && exact),
      label: listParam(params, ["label"]) ?? undefined,
      callerIp: listParam(params, ["callerIp", "callerIP"]) ?? undefined,
      flowControlKey: listParam(params, ["flowControlKey"]) ?? undefined,
      host: listParam(params, ["host"]) ?? undefined,
      path: listParam(params, ["path"], false) ?? undefined,
    },
    range: timeRangeParams(params),
    count: integerParam(params, "count", 1, 1000, 100),
  };
}
