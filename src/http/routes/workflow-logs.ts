/**
 * Workflow run logs and events (docs/hosted-api.md §13.2). Runs ("run mode"):
 * `GET /v2/workflows/logs` (docs/interface.md, the docs' path) and
 * `GET /v2/workflows/events?groupBy=workflowRunId` (what the SDK's
 * `client.logs` calls). Events ("event mode"): `GET /v2/workflows/events`
 * without `groupBy`. The SDK sends its deprecated top-level filters under the
 * same names as the new ones.
 */
import { redactorFor } from "../redactor-for";
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { badRequest } from "../../domain/errors";
import type { TimeRange } from "../../domain/messages/filter";
import { type EventQuery, listWorkflowEvents } from "../../domain/workflows/logs/events";
import { isRunState, WORKFLOW_EVENT_STATES, type WorkflowEventState, workflowEventStates } from "../../domain/workflows/logs/event-states";
import { listRunLogs } from "../../domain/workflows/logs/logs";
import type { RunLogQuery } from "../../domain/workflows/logs/query";
import type { RunFilter } from "../../domain/workflows/run-filter";
import type { BodyLimit } from "../../domain/workflows/logs/trim";
import type { RunKey } from "../../domain/workflows/run-filter";
import type { StepState } from "../../domain/workflows/step-states";
import type { AppDeps } from "../deps";
import { type Operation, operation } from "../openapi/operation";
import { TIME_RANGE } from "../openapi/parameters";
import { listParam, type Params, singleParam, timeParam, timeRangeParams } from "../query";
import { EVENT_PAGE, RUN_PAGE } from "./workflow-log-schemas";

/** Runs per page: 10 by default and at most (docs/interface.md "Limits"); a larger count is clamped. */
const RUN_PAGE_SIZE = 10;
/** Events per page: 1000 by default and at most (docs/hosted-api.md §13.2); a larger count is clamped. */
const EVENT_PAGE_SIZE = 1000;

const MULTI = "Several: repeat the parameter or join them with commas.";
const PARAMETERS = {
  groupBy: "`workflowRunId`: runs (required for runs on /events; /logs always lists runs). Absent on /events: events.",
  cursor: "The cursor the previous page answered; the first page when absent.",
  count: {
    type: "integer",
    description: `Runs per page (default and at most ${RUN_PAGE_SIZE}); events per page (default and at most ${EVENT_PAGE_SIZE}).`,
  },
  workflowRunId: "Run ids. Repeat the parameter for several.",
  workflowUrl: "Workflow URLs. Repeat the parameter for several.",
  workflowCreatedAt: { type: "integer", description: "The run's creation time, Unix milliseconds." },
  workflowRuns: "Runs as `workflowRunId@workflowCreatedAt` pairs (Unix milliseconds), comma-joined; every other filter is then ignored.",
  state: `${WORKFLOW_EVENT_STATES.join(", ")}. Runs: a run state selects runs in it, a step state runs showing such a step. Events: the events' states. ${MULTI}`,
  ...TIME_RANGE,
  label: `Labels. ${MULTI}`,
  messageId: `Ids of the runs' messages. ${MULTI}`,
  callerIp: `IP addresses of the clients that started the runs. ${MULTI}`,
  callerIP: "Alias of callerIp.",
  flowControlKey: `Flow-control keys. ${MULTI}`,
  host: `Workflow URL hosts. ${MULTI}`,
  path: "Workflow URL paths. Repeat the parameter for several.",
  trimBody: {
    type: "integer",
    description: "Bodies (step outputs, call and response bodies, results) cut to at most this many bytes; -1 leaves them out. Runs: whole by default. Events: -1 by default.",
  },
} as const;

const LOGS = operation({
  summary: "List workflow runs",
  description: "Workflow runs with their steps, newest first; what the run asks to hide is shown redacted. `fromDate`/`toDate` bound the runs' creation.",
  tag: "Workflows",
  access: "read",
  query: PARAMETERS,
  responses: { 200: { description: "A page of runs.", json: RUN_PAGE } },
});
const EVENTS = operation({
  summary: "List workflow events, or runs with groupBy=workflowRunId (what the SDK calls)",
  description: [
    "Without `groupBy`: what happened to runs, one entry per event — RUN_STARTED, STEP_SUCCESS for each step's result, STEP_PROGRESS when a message of the run is published, STEP_RETRY and STEP_FAILED for its failed attempts, STEP_CANCELED, and the run's end (RUN_SUCCESS, RUN_FAILED, RUN_CANCELED).",
    "Events come run by run (newest run first), each run's newest first; `fromDate`/`toDate` bound the events' times. With `groupBy=workflowRunId`: the runs, as `GET /v2/workflows/logs`.",
  ].join(" "),
  tag: "Workflows",
  access: "read",
  query: PARAMETERS,
  responses: { 200: { description: "A page of events, or of runs.", json: v.union([EVENT_PAGE, RUN_PAGE]) } },
});

/** Routes of the run logs and events, under /v2/workflows. */
export function workflowLogRoutes(deps: AppDeps) {
  const snapshot = "isolation level repeatable read read only";
  const page = async (c: Context, path: "logs" | "events", op: Operation<undefined>) => {
    const params = op.query(c);
    if (isEventMode(params, path)) {
      const query = eventQuery(params);
      const { events, cursor } = await deps.sql.begin(snapshot, (tx) => listWorkflowEvents(tx, c.get("project"), query, redactorFor(c, deps.redactor)));
      return c.json({ ...(cursor !== null && { cursor }), events });
    }
    const query = runLogQuery(params);
    const { runs, cursor } = await deps.sql.begin(snapshot, (tx) => listRunLogs(tx, c.get("project"), query, redactorFor(c, deps.redactor)));
    // No cursor at the end: the SDK's live test expects it undefined.
    return c.json({ ...(cursor !== null && { cursor }), runs });
  };
  return new Hono()
    .get("/logs", LOGS.describe, (c) => page(c, "logs", LOGS))
    .get("/events", EVENTS.describe, (c) => page(c, "events", EVENTS));
}

/**
 * Events on /events without `groupBy`; runs with `groupBy=workflowRunId`, and
 * always on /logs, which docs/interface.md defines as the run list.
 */
function isEventMode(params: Params, path: "logs" | "events"): boolean {
  const groupBy = singleParam(params, "groupBy");
  if (groupBy !== null && groupBy !== "workflowRunId") throw badRequest("groupBy must be workflowRunId");
  return path === "events" && groupBy === null;
}

function runLogQuery(params: Params): RunLogQuery {
  const { filter, range } = selection(params, true);
  return {
    filter,
    range,
    cursor: singleParam(params, "cursor"),
    count: countParam(params, RUN_PAGE_SIZE),
    bodyLimit: bodyLimitParam(params, null),
  };
}

function eventQuery(params: Params): EventQuery {
  const { filter, range, states } = selection(params, false);
  return {
    filter,
    range,
    states,
    cursor: singleParam(params, "cursor"),
    count: countParam(params, EVENT_PAGE_SIZE),
    bodyLimit: bodyLimitParam(params, -1),
  };
}

/**
 * The filter, the time window and the states; with `workflowRuns`, only those
 * runs (docs/hosted-api.md §13.2: every other filter is then ignored). In run
 * mode the states filter the runs; in event mode, the events.
 */
function selection(params: Params, runMode: boolean): { filter: RunFilter; range: TimeRange; states: WorkflowEventState[] | null } {
  const runs = runsParam(params);
  if (runs !== null) return { filter: { runs }, range: { fromDate: null, toDate: null }, states: null };
  const filter = runFilter(params);
  const states = listParam(params, ["state"]);
  const parsed = states === null ? null : workflowEventStates(states);
  if (runMode && parsed !== null) {
    filter.state = parsed.filter(isRunState);
    filter.stepState = parsed.filter((state): state is StepState => !isRunState(state));
  }
  return { filter, range: timeRangeParams(params), states: runMode ? null : parsed };
}

function runFilter(params: Params): RunFilter {
  const filter: RunFilter = {};
  const set = <K extends keyof RunFilter>(field: K, value: RunFilter[K] | null) => {
    if (value !== null) filter[field] = value;
  };
  // Run ids, URLs and paths may hold commas: only repeating the parameter gives several.
  set("workflowRunId", listParam(params, ["workflowRunId"], false));
  set("workflowUrl", listParam(params, ["workflowUrl"], false));
  const createdAt = timeParam(params, "workflowCreatedAt");
  set("workflowCreatedAt", createdAt === null ? null : [createdAt]);
  set("label", listParam(params, ["label"]));
  set("messageId", listParam(params, ["messageId"]));
  set("callerIp", listParam(params, ["callerIp", "callerIP"]));
  set("flowControlKey", listParam(params, ["flowControlKey"]));
  set("host", listParam(params, ["host"]));
  set("path", listParam(params, ["path"], false));
  return filter;
}

/** `workflowRuns=ID1@TS1,ID2@TS2`: a run id (up to its last `@`) and its creation time in Unix milliseconds. */
function runsParam(params: Params): RunKey[] | null {
  const pairs = listParam(params, ["workflowRuns"]);
  return (
    pairs?.map((pair) => {
      const at = pair.lastIndexOf("@");
      const createdAt = pair.slice(at + 1);
      if (at <= 0 || !/^\d{1,15}$/.test(createdAt)) {
        throw badRequest(`workflowRuns takes workflowRunId@workflowCreatedAt pairs (Unix milliseconds), got "${pair}"`);
      }
      return { runId: pair.slice(0, at), createdAt: Number(createdAt) };
    }) ?? null
  );
}

function countParam(params: Params, pageSize: number): number {
  const text = singleParam(params, "count");
  if (text === null) return pageSize;
  if (!/^\d{1,9}$/.test(text.trim()) || Number(text) < 1) {
    throw badRequest(`count must be a whole number from 1 to ${pageSize}, got "${text}"`);
  }
  return Math.min(Number(text), pageSize);
}

/** `trimBody`: a whole number of bytes, or -1 to leave bodies out; `fallback` when absent. */
function bodyLimitParam(params: Params, fallback: BodyLimit): BodyLimit {
  const text = singleParam(params, "trimBody");
  if (text === null) return fallback;
  if (!/^(-1|\d{1,9})$/.test(text.trim())) throw badRequest(`trimBody must be -1 or a whole number of bytes, got "${text}"`);
  return Number(text);
}
