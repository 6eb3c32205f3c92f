/**
 * Workflow runs, newest first, with the filters of `GET /v2/workflows/logs`
 * (domain/workflows/logs), ten runs a page, refreshed in place.
 */
import { Hono } from "hono";
import type { RunFilter } from "../../../domain/workflows/logs/logs";
import { listRunLogs, RUN_STATES, runStates } from "../../../domain/workflows/logs/logs";
import { Badge, Live, Pager, Time } from "../components";
import type { DashboardEnv } from "../env";
import { FilterButtons, SinceFilter, StateFilter, TextFilters } from "../filters";
import { Layout } from "../layout";
import { NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, rangeParams } from "../params";
import { currentUrl } from "./messages";

const RUN_FIELDS = [
  ["workflowRunId", "Run id", 18],
  ["workflowUrl", "Workflow URL", 28],
  ["label", "Label", 10],
  ["messageId", "Message id", 14],
  ["flowControlKey", "Flow-control key", 10],
  ["callerIp", "Caller IP", 10],
  ["host", "Host", 10],
  ["path", "Path", 10],
] as const;

/** Filter fields, as `GET /v2/workflows/logs` names them. */
const FIELDS = ["workflowRunId", "workflowUrl", "state", "label", "messageId", "callerIp", "flowControlKey", "host", "path"] as const;
const FILTERS = [...FIELDS, "since", "from", "to"] as const;
/** Runs per page: the run logs' own page size. */
const PAGE_SIZE = 10;

/** `GET /dashboard/workflows`. */
export function workflowListRoutes(deps: PageDeps) {
  return new Hono<DashboardEnv>().get("/workflows", async (c) => {
    const params = pageParams(c, [...FILTERS, "cursor", ...NOTICE_PARAMS]);
    const now = nowOf(deps);
    const filter: RunFilter = {};
    for (const field of FIELDS) {
      const value = first(params, field);
      if (value === null) continue;
      if (field === "state") filter.state = runStates([value]);
      else filter[field] = [value];
    }
    const query = { filter, range: rangeParams(params, now), cursor: first(params, "cursor"), count: PAGE_SIZE };
    const { runs, cursor } = await deps.sql.begin("isolation level repeatable read read only", (tx) =>
      listRunLogs(tx, query, deps.redactor),
    );
    const values = Object.fromEntries(FILTERS.map((name) => [name, first(params, name)]));
    return c.html(
      <Layout frame={frameOf(deps, c)} title="Workflow runs" section="workflows" notice={noticeOf(c)}>
        <h1>Workflow runs</h1>
        <form class="filters" method="get" action="/dashboard/workflows">
          <StateFilter states={RUN_STATES} values={values} />
          <TextFilters fields={RUN_FIELDS} values={values} />
          <SinceFilter label="Created" values={values} />
          <FilterButtons clear="/dashboard/workflows" />
        </form>
        <Live url={currentUrl(c)}>
          {runs.length === 0 ? (
            <p class="muted">No workflow runs match.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Run</th>
                  <th>State</th>
                  <th>Workflow URL</th>
                  <th>Steps</th>
                  <th>Created</th>
                  <th>Finished</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((run) => (
                  <tr data-run-id={run.workflowRunId}>
                    <td class="mono">
                      <a href={`/dashboard/workflows/${encodeURIComponent(run.workflowRunId)}`}>{run.workflowRunId}</a>
                    </td>
                    <td>
                      <Badge state={run.workflowState} />
                    </td>
                    <td class="url">{run.workflowUrl}</td>
                    <td>{run.steps.reduce((n, group) => n + group.steps.length, 0)}</td>
                    <td>
                      <Time at={run.workflowRunCreatedAt} now={now} />
                    </td>
                    <td>
                      <Time at={run.workflowRunCompletedAt} now={now} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager
            next={cursor === null ? null : linkTo("/dashboard/workflows", values, { cursor })}
            first={first(params, "cursor") === null ? null : linkTo("/dashboard/workflows", values)}
          />
        </Live>
      </Layout>,
    );
  });
}
