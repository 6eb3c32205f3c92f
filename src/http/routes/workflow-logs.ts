/**
 * Workflow run logs: `GET /v2/workflows/logs` (docs/interface.md, the docs' path)
 * and `GET /v2/workflows/events?groupBy=workflowRunId` (what the SDK's
 * `client.logs` calls) serve the same pages (docs/hosted-api.md §13.2). The SDK
 * sends its deprecated top-level filters under the same names as the new ones.
 */
import { type Context, Hono } from "hono";
import { badRequest } from "../../domain/errors";
import { listRunLogs, type RunFilter, type RunLogQuery, type RunState, runStates } from "../../domain/workflows/logs/logs";
import type { AppDeps } from "../deps";
import { listParam, type Params, queryParams, singleParam, timeParam, timeRangeParams } from "../query";

const PARAMETERS = [
  "groupBy", "cursor", "count", "workflowRunId", "workflowUrl", "workflowCreatedAt", "state", "fromDate", "toDate",
  "label", "messageId", "callerIp", "callerIP", "flowControlKey", "host", "path",
];

/** Runs per page: 10 by default and at most (docs/interface.md "Limits"); a larger count is clamped. */
const PAGE_SIZE = 10;

/** Routes of the run logs, under /v2/workflows. */
export function workflowLogRoutes(deps: AppDeps) {
  const page = async (c: Context, path: "logs" | "events") => {
    const query = runLogQuery(c, path);
    const { runs, cursor } = await deps.sql.begin("isolation level repeatable read read only", (tx) =>
      listRunLogs(tx, query, deps.redactor),
    );
    // No cursor at the end: the SDK's live test expects it undefined.
    return c.json({ ...(cursor !== null && { cursor }), runs });
  };
  return new Hono().get("/logs", (c) => page(c, "logs")).get("/events", (c) => page(c, "events"));
}

function runLogQuery(c: Context, path: "logs" | "events"): RunLogQuery {
  const params = queryParams(c, PARAMETERS);
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
