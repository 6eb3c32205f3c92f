/**
 * Workflow runs as the SDK drives them (docs/workflow-protocol.md §9, §11):
 * `DELETE /v2/workflows/runs/{id}?cancel=false|true` ends a run (idempotent),
 * `GET /v2/workflows/runs/{id}` serves its step list (lazy fetch), and
 * `DELETE /v2/workflows/runs` cancels runs in bulk (docs/hosted-api.md §13.1).
 */
import { Hono } from "hono";
import * as v from "valibot";
import { beginRetryingDeadlocks } from "../../db/deadlocks";
import { AppError, badRequest } from "../../domain/errors";
import { messageSettings, parseBoolean } from "../../domain/publish/options";
import { cancelRuns, type RunCancelSelection } from "../../domain/workflows/cancel";
import { finishRun } from "../../domain/workflows/lifecycle";
import { findActiveRun, findLatestRun, stepList } from "../../domain/workflows/runs";
import { textOf } from "../body";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { TIME_RANGE } from "../openapi/parameters";
import { integerParam, listParam, type Params, singleParam, timeRangeParams } from "../query";

const MULTI = "Several: repeat the parameter or join them with commas.";
const RUN_ID = { id: "The run's id." };

const CANCEL_MANY = operation({
  summary: "Cancel workflow runs",
  description: "The runs given by id, else at most `count` active runs matching every filter given.",
  tag: "Workflows",
  access: "full-token",
  query: {
    workflowRunIds: `Run ids; the filters are then ignored. ${MULTI}`,
    workflowUrl: "Workflow URLs: prefixes unless workflowUrlExactMatch=true. Repeat the parameter for several.",
    workflowUrlExactMatch: { type: "boolean", description: "`true`: workflowUrl matches whole URLs only." },
    workflowUrlStartingWith: "Workflow URL prefixes. Repeat the parameter for several.",
    urlStartingWith: "Alias of workflowUrlStartingWith.",
    ...TIME_RANGE,
    callerIp: `IP addresses of the clients that started the runs. ${MULTI}`,
    callerIP: "Alias of callerIp.",
    flowControlKey: `Flow-control keys. ${MULTI}`,
    label: `Labels. ${MULTI}`,
    host: `Workflow URL hosts. ${MULTI}`,
    path: "Workflow URL paths. Repeat the parameter for several.",
    count: { type: "integer", description: "Most runs cancelled, 1 to 1000 (default 100)." },
  },
  body: { filters: "The parameters as a JSON object, as older SDKs send them (`{\"workflowUrl\": \"...\"}`)." },
  responses: { 200: { description: "How many runs were cancelled.", json: v.object({ cancelled: v.number() }) } },
});
const END = operation({
  summary: "End a workflow run (workflow SDK)",
  description: "With `cancel=true` the run is cancelled; otherwise it succeeded, with the body as its result. Ending an ended run changes nothing.",
  tag: "Workflows",
  access: "full-token",
  path: RUN_ID,
  query: { cancel: { type: "boolean", description: "`true` cancels the run." } },
  body: { text: "The run's result (when it succeeded)." },
  responses: { 200: "Ended." },
  errors: [404, 413],
});
const STEPS = operation({
  summary: "Get an active run's steps (workflow SDK)",
  description: "The steps done so far, as the SDK executing the run reads them; they hold what the run asks to hide, so only a full token reads them (readers see the run in the logs).",
  tag: "Workflows",
  access: "full-token",
  path: RUN_ID,
  responses: {
    200: {
      description: "The steps, in order (docs/workflow-protocol.md §2.3).",
      json: v.array(
        v.object({
          messageId: v.string(),
          body: v.pipe(v.string(), v.description("Base64 of the entry's body; the first is the run's input.")),
          callType: v.pipe(v.string(), v.description("step, toCallback, fromCallback or failureCall.")),
        }),
      ),
    },
  },
  errors: [404],
});

/** Routes of a single workflow run. */
export function workflowRunRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  return new Hono()
    .delete("/", CANCEL_MANY.describe, async (c) => {
      const selection = cancelSelection(await CANCEL_MANY.bulk(c));
      return c.json({ cancelled: await beginRetryingDeadlocks(deps.sql, (tx) => cancelRuns(tx, c.get("project"), selection, settings)) });
    })
    .delete("/:id", END.describe, async (c) => {
      const id = c.req.param("id");
      const cancel = singleParam(END.query(c), "cancel") === "true";
      const response = cancel ? null : textOf(c, deps.config.maxMessageBytes);
      // Ending a run that invoked others or was invoked can meet the other run's outcome in a deadlock (seen on
      // Citus); so can cancelling runs, above, and notifying them (workflow-events.ts).
      await beginRetryingDeadlocks(deps.sql, async (tx) => {
        const run = await findLatestRun(tx, c.get("project"), id);
        if (!run) throw new AppError(404, `workflow run ${id} not found`);
        // Ending an ended run again is a no-op: the SDK may repeat the call.
        if (run.state === "RUN_STARTED") {
          await finishRun(tx, run, cancel ? "RUN_CANCELED" : "RUN_SUCCESS", response === "" ? null : response, settings);
        }
      });
      return c.json({});
    })
    .get("/:id", STEPS.describe, async (c) => {
      const id = c.req.param("id");
      const steps = await deps.sql.begin(async (tx) => {
        const run = await findActiveRun(tx, c.get("project"), id);
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
