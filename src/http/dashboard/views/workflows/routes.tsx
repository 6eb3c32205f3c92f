/**
 * Workflow runs as the run logs show them (domain/workflows/logs, redaction
 * applied): the list with the filters of `GET /v2/workflows/logs`, a run's
 * page (its log and timeline, logs/run-detail.ts, with a way back to the
 * list it was opened from), and cancel, and resume or restart from the DLQ
 * (domain/workflows/cancel.ts, dlq/resume.ts). A step's "retry now" is the
 * message's (views/messages/retry-now.tsx).
 */
import { redactorFor } from "../../../redactor-for";
import { type Context, Hono } from "hono";
import { AppError } from "../../../../domain/errors";
import { messageSettings } from "../../../../domain/publish/options";
import { cancelRuns } from "../../../../domain/workflows/cancel";
import { type NewRunMode, newRunFromDlqEntry } from "../../../../domain/workflows/dlq/resume";
import { readRunOverrides } from "../../../../domain/workflows/dlq/run-overrides";
import { listRunLogs, type RunLog, runStates } from "../../../../domain/workflows/logs/logs";
import type { RunLogQuery } from "../../../../domain/workflows/logs/query";
import type { RunFilter } from "../../../../domain/workflows/run-filter";
import { readRunDetail } from "../../../../domain/workflows/logs/run-detail";
import type { AppDeps } from "../../../deps";
import { type Params, singleParam } from "../../../query";
import type { DashboardEnv } from "../../env";
import { filterValues } from "../../kit/filters";
import { safeNext } from "../../session/guard";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { currentUrl, nowOf } from "../../kit/page";
import { linkTo, pageParams, rangeParams, runPath } from "../../kit/params";
import { RunPage, type RunPlace } from "./run-page";
import { RUN_FIELDS, RUN_FILTERS, RunsPage } from "./runs-page";

/** Runs per page: the run logs' own page size. */
const PAGE_SIZE = 10;

const LIST = "/dashboard/workflows";

/** `GET /dashboard/workflows`, `GET /dashboard/workflows/:runId` and the run's actions. */
export function workflowRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  const newRun = (mode: NewRunMode) => async (c: Context<DashboardEnv>) => {
    const run = await findRun(deps, c.get("project"), c.req.param("runId")!);
    if (run.dlqId === undefined) throw new AppError(404, `workflow run ${run.workflowRunId} is not in the DLQ`);
    const overrides = readRunOverrides({}, "upstash", deps.config);
    const started = await deps.sql.begin((tx) => newRunFromDlqEntry(tx, c.get("project"), run.dlqId!, mode, overrides, settings));
    const path = runPath(started.workflowRunId);
    return doneRedirect(c, path, mode === "resume" ? "run-resumed" : "run-restarted", started.workflowRunId);
  };
  return new Hono<DashboardEnv>()
    .get("/workflows", async (c) => {
      const params = pageParams(c, [...RUN_FILTERS, "cursor", ...NOTICE_PARAMS]);
      const [now, filter, cursor] = [nowOf(deps), runFilter(params), singleParam(params, "cursor")];
      const { runs, cursor: next } = await readRuns(deps, c.get("project"), { filter, range: rangeParams(params, now), cursor, count: PAGE_SIZE }, redactorFor(c, deps.redactor));
      const props = { runs, values: filterValues(params, RUN_FILTERS), cursor, next, now, self: currentUrl(c) };
      return c.render(<RunsPage {...props} />, { title: "Workflow runs", section: "workflows" });
    })
    .get("/workflows/:runId", async (c) => {
      const runId = c.req.param("runId");
      const list = listBack(singleParam(pageParams(c, ["back", ...NOTICE_PARAMS]), "back"));
      const detail = await deps.sql.begin(SNAPSHOT, (tx) => readRunDetail(tx, c.get("project"), runId, redactorFor(c, deps.redactor)));
      if (detail === null) throw new AppError(404, `workflow run ${runId} not found`);
      const place = runPlace(runId, list);
      const props = { detail, place, now: nowOf(deps), viewer: c.get("viewer"), cutAt: deps.config.maxMessageBytes };
      const title = `Workflow run ${runId} · ${detail.run.workflowUrl}`;
      return c.render(<RunPage {...props} />, { title, section: "workflows", back: { href: list, label: "Workflow runs" } });
    })
    .post("/workflows/:runId/cancel", async (c) => {
      const runId = c.req.param("runId");
      const cancelled = await deps.sql.begin((tx) => cancelRuns(tx, c.get("project"), { runIds: [runId] }, settings));
      if (cancelled === 0) throw new AppError(404, `workflow run ${runId} is not running`);
      return doneRedirect(c, runPlace(runId, listBack(c.get("form").get("back") ?? null)).here, "run-cancelled", runId);
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

/**
 * The runs list a run's page came from (`back`: the list's path with its
 * filters), or the list itself when `back` is not one, so that a link cannot
 * lead off the dashboard.
 */
function listBack(back: string | null): string {
  return back !== null && safeNext(back) === back && (back === LIST || back.startsWith(`${LIST}?`)) ? back : LIST;
}

/** A run's page, the runs list it came from, and its address keeping that way back. */
function runPlace(runId: string, list: string): RunPlace {
  const path = runPath(runId);
  return { path, list, here: list === LIST ? path : linkTo(path, { back: list }) };
}

/** Reads of a page see one snapshot. */
const SNAPSHOT = "isolation level repeatable read read only";

/** A page of the project's runs, as the run logs read it. */
const readRuns = (deps: AppDeps, project: string, query: RunLogQuery, redactor = deps.redactor) =>
  deps.sql.begin(SNAPSHOT, (tx) => listRunLogs(tx, project, query, redactor));

/** The project's newest run with id `runId`, as the run logs show it. */
async function findRun(deps: AppDeps, project: string, runId: string): Promise<RunLog> {
  const { runs } = await readRuns(deps, project, { filter: { workflowRunId: [runId] }, range: { fromDate: null, toDate: null }, cursor: null, count: 1 });
  if (runs.length === 0) throw new AppError(404, `workflow run ${runId} not found`);
  return runs[0]!;
}
