/**
 * Workflow run logs: `GET /v2/workflows/logs` (docs/interface.md, the docs' path)
 * and `GET /v2/workflows/events?groupBy=workflowRunId` (what the SDK's
 * `client.logs` calls) serve the same pages (docs/hosted-api.md §13.2). The SDK
 * sends its deprecated top-level filters under the same names as the new ones.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { badRequest } from "../../domain/errors";
import { listRunLogs, RUN_STATES, type RunFilter, type RunLogQuery, type RunState, runStates } from "../../domain/workflows/logs/logs";
import type { AppDeps } from "../deps";
import { type Operation, operation } from "../openapi/operation";
import { TIME_RANGE } from "../openapi/parameters";
import { listParam, type Params, singleParam, timeParam, timeRangeParams } from "../query";

/** Runs per page: 10 by default and at most (docs/interface.md "Limits"); a larger count is clamped. */
const PAGE_SIZE = 10;

const MULTI = "Several: repeat the parameter or join them with commas.";
const PARAMETERS = {
  groupBy: "`workflowRunId` (required on /events).",
  cursor: "The cursor the previous page answered; the first page when absent.",
  count: { type: "integer", description: `Runs per page (default and at most ${PAGE_SIZE}).` },
  workflowRunId: "Run ids. Repeat the parameter for several.",
  workflowUrl: "Workflow URLs. Repeat the parameter for several.",
  workflowCreatedAt: { type: "integer", description: "The run's creation time, Unix milliseconds." },
  state: `Run states: ${RUN_STATES.join(", ")}. ${MULTI}`,
  ...TIME_RANGE,
  label: `Labels. ${MULTI}`,
  messageId: `Ids of the runs' messages. ${MULTI}`,
  callerIp: `IP addresses of the clients that started the runs. ${MULTI}`,
  callerIP: "Alias of callerIp.",
  flowControlKey: `Flow-control keys. ${MULTI}`,
  host: `Workflow URL hosts. ${MULTI}`,
  path: "Workflow URL paths. Repeat the parameter for several.",
} as const;
const RUNS = v.object({
  runs: v.array(
    v.looseObject({
      workflowRunId: v.string(),
      workflowUrl: v.string(),
      workflowState: v.picklist(RUN_STATES),
      workflowRunCreatedAt: v.number(),
      steps: v.pipe(v.array(v.unknown()), v.description("Step groups in order: sequential ones, and parallel groups.")),
    }),
  ),
  cursor: v.optional(v.string()),
});
const runLogOperation = (summary: string) =>
  operation({
    summary,
    description: "Workflow runs with their steps, newest first; what the run asks to hide is shown redacted.",
    tag: "Workflows",
    query: PARAMETERS,
    responses: { 200: { description: "A page of runs.", json: RUNS } },
  });
const LOGS = runLogOperation("List workflow runs");
const EVENTS = runLogOperation("List workflow runs (what the SDK calls, with groupBy=workflowRunId)");

/** Routes of the run logs, under /v2/workflows. */
export function workflowLogRoutes(deps: AppDeps) {
  const page = async (c: Context, path: "logs" | "events", op: Operation<undefined>) => {
    const query = runLogQuery(op.query(c), path);
    const { runs, cursor } = await deps.sql.begin("isolation level repeatable read read only", (tx) =>
      listRunLogs(tx, query, deps.redactor),
    );
    // No cursor at the end: the SDK's live test expects it undefined.
    return c.json({ ...(cursor !== null && { cursor }), runs });
  };
  return new Hono()
    .get("/logs", LOGS.describe, (c) => page(c, "logs", LOGS))
    .get("/events", EVENTS.describe, (c) => page(c, "events", EVENTS));
}

function runLogQuery(params: Params, path: "logs" | "events"): RunLogQuery {
  const groupBy = singleParam(params, "groupBy");
  // Without groupBy, /events is the flat event list, which Dispatch does not serve for workflows.
  if (groupBy !== "workflowRunId" && (groupBy !== null || path === "events")) {
    throw badRequest("groupBy must be workflowRunId");
  }
  return {
    filter: runLogFilter(params),
    range: timeRangeParams(params),
    cursor: singleParam(params, "cursor"),
    count: countParam(params),
  };
}

function runLogFilter(params: Params): RunFilter {
  const filter: RunFilter = {};
  const set = <K extends keyof RunFilter>(field: K, value: RunFilter[K] | null) => {
    if (value !== null) filter[field] = value;
  };
  // Run ids, URLs and paths may hold commas: only repeating the parameter gives several.
  set("workflowRunId", listParam(params, ["workflowRunId"], false));
  set("workflowUrl", listParam(params, ["workflowUrl"], false));
  const createdAt = timeParam(params, "workflowCreatedAt");
  set("workflowCreatedAt", createdAt === null ? null : [createdAt]);
  set("state", stateParam(params));
  set("label", listParam(params, ["label"]));
  set("messageId", listParam(params, ["messageId"]));
  set("callerIp", listParam(params, ["callerIp", "callerIP"]));
  set("flowControlKey", listParam(params, ["flowControlKey"]));
  set("host", listParam(params, ["host"]));
  set("path", listParam(params, ["path"], false));
  return filter;
}

function stateParam(params: Params): RunState[] | null {
  const states = listParam(params, ["state"]);
  return states === null ? null : runStates(states);
}

function countParam(params: Params): number {
  const text = singleParam(params, "count");
  if (text === null) return PAGE_SIZE;
  if (!/^\d{1,9}$/.test(text.trim()) || Number(text) < 1) {
    throw badRequest(`count must be a whole number from 1 to ${PAGE_SIZE}, got "${text}"`);
  }
  return Math.min(Number(text), PAGE_SIZE);
}
