/**
 * Workflow runs as the run logs show them (domain/workflows/logs, redaction
 * applied): the list with the filters of `GET /v2/workflows/logs`, a run's
 * page, and cancel, and resume or restart from the DLQ
 * (domain/workflows/cancel.ts, dlq/resume.ts).
 */
import { type Context, Hono } from "hono";
import { AppError } from "../../../../domain/errors";
import { messageSettings } from "../../../../domain/publish/options";
import { cancelRuns } from "../../../../domain/workflows/cancel";
import { type NewRunMode, newRunFromDlqEntry } from "../../../../domain/workflows/dlq/resume";
import { readRunOverrides } from "../../../../domain/workflows/dlq/run-overrides";
import { listRunLogs, type RunFilter, type RunLog, type RunLogQuery, runStates } from "../../../../domain/workflows/logs/logs";
import type { AppDeps } from "../../../deps";
import { type Params, singleParam } from "../../../query";
import type { DashboardEnv } from "../../env";
import { filterValues } from "../../filters";
import { doneRedirect, NOTICE_PARAMS } from "../../notices";
import { currentUrl, nowOf } from "../../page";
import { pageParams, rangeParams } from "../../params";
import { RunPage } from "./run-page";
import { RUN_FIELDS, RUN_FILTERS, RunsPage } from "./runs-page";

/** Runs per page: the run logs' own page size. */
const PAGE_SIZE = 10;

/** `GET /dashboard/workflows`, `GET /dashboard/workflows/:runId` and the run's actions. */
export function workflowRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  const newRun = (mode: NewRunMode) => async (c: Context<DashboardEnv>) => {
    const run = await findRun(deps, c.req.param("runId")!);
    if (run.dlqId === undefined) throw new AppError(404, `workflow run ${run.workflowRunId} is not in the DLQ`);
    const overrides = readRunOverrides({}, "upstash", deps.config);
    const started = await deps.sql.begin((tx) => newRunFromDlqEntry(tx, run.dlqId!, mode, overrides, settings));
    const path = `/dashboard/workflows/${encodeURIComponent(started.workflowRunId)}`;
    return doneRedirect(c, path, mode === "resume" ? "run-resumed" : "run-restarted", started.workflowRunId);
  };
  return new Hono<DashboardEnv>()
    .get("/workflows", async (c) => {
      const params = pageParams(c, [...RUN_FILTERS, "cursor", ...NOTICE_PARAMS]);
      const [now, filter, cursor] = [nowOf(deps), runFilter(params), singleParam(params, "cursor")];
      const { runs, cursor: next } = await readRuns(deps, { filter, range: rangeParams(params, now), cursor, count: PAGE_SIZE });
      const props = { runs, values: filterValues(params, RUN_FILTERS), cursor, next, now, self: currentUrl(c) };
      return c.render(<RunsPage {...props} />, { title: "Workflow runs", section: "workflows" });
    })
    .get("/workflows/:runId", async (c) => {
      pageParams(c, NOTICE_PARAMS);
      const run = await findRun(deps, c.req.param("runId"));
      const props = { run, now: nowOf(deps), viewer: c.get("viewer") };
      return c.render(<RunPage {...props} />, { title: run.workflowRunId, section: "workflows" });
    })
    .post("/workflows/:runId/cancel", async (c) => {
      const runId = c.req.param("runId");
      const cancelled = await deps.sql.begin((tx) => cancelRuns(tx, { runIds: [runId] }, settings));
      if (cancelled === 0) throw new AppError(404, `workflow run ${runId} is not running`);
      return doneRedirect(c, `/dashboard/workflows/${encodeURIComponent(runId)}`, "run-cancelled", runId);
    })
    .post("/workflows/:runId/resume", newRun("resume"))
    .post("/workflows/:runId/restart", newRun("restart"));
}

/** The run filter of the form's fields: one value each, as `GET /v2/workflows/logs` names them. */
function runFilter(params: Params): RunFilter {
  const filter: RunFilter = {};
  for (const field of RUN_FIELDS) {
    const value = singleParam(params, field);
    if (value === null) continue;
    if (field === "state") filter.state = runStates([value]);
    else filter[field] = [value];
  }
  return filter;
}

/** A page of runs, as the run logs read it. */
const readRuns = (deps: AppDeps, query: RunLogQuery) =>
  deps.sql.begin("isolation level repeatable read read only", (tx) => listRunLogs(tx, query, deps.redactor));

/** The newest run with id `runId`, as the run logs show it. */
async function findRun(deps: AppDeps, runId: string): Promise<RunLog> {
  const { runs } = await readRuns(deps, { filter: { workflowRunId: [runId] }, range: { fromDate: null, toDate: null }, cursor: null, count: 1 });
  if (runs.length === 0) throw new AppError(404, `workflow run ${runId} not found`);
  return runs[0]!;
}
