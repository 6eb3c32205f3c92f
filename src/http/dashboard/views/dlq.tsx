/**
 * The DLQ: entries newest first with filters (destination URL, URL group,
 * queue, label, response status, time), each with its last response; retry
 * and delete one entry or the selected ones, through the DLQ's domain
 * functions (domain/dlq/dlq.ts), as `POST /v2/dlq/retry` and `DELETE /v2/dlq` do.
 */
import { Hono } from "hono";
import { type DlqEntry, deleteDlqEntries, deleteDlqEntry, findDlqEntry, listDlq, retryDlqEntries, retryDlqEntry } from "../../../domain/dlq/dlq";
import { badRequest } from "../../../domain/errors";
import type { MessageFilter } from "../../../domain/messages/filter";
import { messageSettings } from "../../../domain/publish/options";
import { Action, Badge, BodyBlock, Facts, HeadersTable, Live, Pager, Time } from "../components";
import { canAct, type DashboardEnv, type Viewer } from "../env";
import { FilterButtons, type FilterValues, RangeFilter, SinceFilter, TextFilters } from "../filters";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, rangeParams } from "../params";
import { currentUrl } from "./messages";

const FILTERS = ["url", "topicName", "queueName", "label", "responseStatus", "since", "from", "to"] as const;
const PAGE_SIZE = 50;
/** At most this many entries are retried or deleted by one selection (a page). */
const MAX_SELECTED = 100;
/** A retry from the dashboard overrides nothing of the original. */
const NO_OVERRIDES = { headers: {}, dialect: "svc" } as const;

/** `/dashboard/dlq…`. */
export function dlqRoutes(deps: PageDeps) {
  const settings = messageSettings(deps.config);
  return new Hono<DashboardEnv>()
    .get("/dlq", async (c) => {
      const params = pageParams(c, [...FILTERS, "cursor", ...NOTICE_PARAMS]);
      const now = nowOf(deps);
      const filter: MessageFilter = {};
      for (const field of ["url", "topicName", "queueName", "label"] as const) {
        const value = first(params, field);
        if (value !== null) filter[field] = [value];
      }
      const status = first(params, "responseStatus");
      if (status !== null && !/^\d{3}$/.test(status)) throw badRequest(`responseStatus must be an HTTP status code, got "${status}"`);
      const selection = { filter, responseStatus: status === null ? null : [Number(status)], range: rangeParams(params, now) };
      const page = await listDlq(deps.sql, selection, { cursor: first(params, "cursor"), count: PAGE_SIZE, order: "latestFirst" });
      const values = Object.fromEntries(FILTERS.map((name) => [name, first(params, name)]));
      const viewer = c.get("viewer");
      return c.html(
        <Layout frame={frameOf(deps, c)} title="DLQ" section="dlq" notice={noticeOf(c)}>
          <h1>Dead letter queue</h1>
          <Filters values={values} />
          <Live url={currentUrl(c)} holdWhileChecked>
            {canAct(viewer) ? (
              <form method="post" action="/dashboard/dlq/retry">
                <input type="hidden" name="_csrf" value={viewer.csrf} />
                <EntryTable entries={page.items} now={now} viewer={viewer} />
                {page.items.length > 0 && (
                  <div class="actions">
                    <button type="submit" class="primary">
                      Retry selected
                    </button>
                    <button type="submit" class="danger" formaction="/dashboard/dlq/delete" data-confirm="Delete the selected entries?">
                      Delete selected
                    </button>
                  </div>
                )}
              </form>
            ) : (
              <EntryTable entries={page.items} now={now} viewer={viewer} />
            )}
            <Pager
              next={page.cursor === null ? null : linkTo("/dashboard/dlq", values, { cursor: page.cursor })}
              first={first(params, "cursor") === null ? null : linkTo("/dashboard/dlq", values)}
            />
          </Live>
        </Layout>,
      );
    })
    .post("/dlq/retry", async (c) => {
      const dlqIds = selected(c.get("form"));
      if (dlqIds.length === 0) return doneRedirect(c, "/dashboard/dlq", "nothing-selected");
      const page = { cursor: null, count: dlqIds.length, order: "earliestFirst" } as const;
      const { items } = await deps.sql.begin((tx) => retryDlqEntries(tx, { dlqIds }, page, NO_OVERRIDES, settings));
      return doneRedirect(c, "/dashboard/dlq", "retried-many", `${items.length}`);
    })
    .post("/dlq/delete", async (c) => {
      const dlqIds = selected(c.get("form"));
      if (dlqIds.length === 0) return doneRedirect(c, "/dashboard/dlq", "nothing-selected");
      const page = { cursor: null, count: dlqIds.length, order: "earliestFirst" } as const;
      const { items } = await deps.sql.begin((tx) => deleteDlqEntries(tx, { dlqIds }, page));
      return doneRedirect(c, "/dashboard/dlq", "deleted-many", `${items.length}`);
    })
    .get("/dlq/:dlqId", async (c) => {
      pageParams(c, ["body", ...NOTICE_PARAMS]);
      const entry = await findDlqEntry(deps.sql, c.req.param("dlqId"));
      const shown = deps.redactor.message(entry.message);
      const path = `/dashboard/dlq/${encodeURIComponent(entry.dlqId)}`;
      const view = c.req.query("body");
      const now = nowOf(deps);
      return c.html(
        <Layout frame={frameOf(deps, c)} title={entry.dlqId} section="dlq" notice={noticeOf(c)}>
          <h1 class="mono">{entry.dlqId}</h1>
          <div class="card">
            <Facts
              items={[
                ["Message", <a href={`/dashboard/messages/${encodeURIComponent(shown.id)}`}>{shown.id}</a>],
                ["Destination", <span class="mono">{shown.url}</span>],
                ["State", <Badge state={shown.state} />],
                ["Failed", <Time at={shown.completedAt} now={now} />],
                ["Last response", entry.responseStatus === null ? "no response" : `HTTP ${entry.responseStatus}`],
                ["Error", entry.error ?? "—"],
              ]}
            />
            <div class="actions">
              <Action viewer={c.get("viewer")} action={`${path}/retry`} label="Retry" />
              <Action viewer={c.get("viewer")} action={`${path}/delete`} label="Delete" danger confirm="Delete this DLQ entry?" />
            </div>
          </div>
          <h2>Last response</h2>
          <HeadersTable headers={entry.responseHeaders} />
          <BodyBlock
            body={entry.responseBody ?? Buffer.alloc(0)}
            view={view === "text" || view === "json" || view === "hex" ? view : null}
            link={(v) => `${path}?body=${v}`}
            label="Response body"
          />
          <p>
            The request, and every attempt, are on the <a href={`/dashboard/messages/${encodeURIComponent(shown.id)}`}>message's page</a>.
          </p>
        </Layout>,
      );
    })
    .post("/dlq/:dlqId/retry", async (c) => {
      const result = await deps.sql.begin((tx) => retryDlqEntry(tx, c.req.param("dlqId"), NO_OVERRIDES, settings));
      return doneRedirect(c, `/dashboard/messages/${encodeURIComponent(result.messageId)}`, "retried", result.messageId);
    })
    .post("/dlq/:dlqId/delete", async (c) => {
      const dlqId = c.req.param("dlqId");
      await deps.sql.begin((tx) => deleteDlqEntry(tx, dlqId));
      return doneRedirect(c, "/dashboard/dlq", "deleted", dlqId);
    });
}

/** The DLQ ids ticked in a form, at most `MAX_SELECTED`. */
function selected(form: Map<string, string>): string[] {
  const ids = (form.get("dlqIds") ?? "").split(",").filter((id) => id !== "");
  if (ids.length > MAX_SELECTED) throw badRequest(`select at most ${MAX_SELECTED} entries at a time`);
  return ids;
}

const EntryTable = (props: { entries: DlqEntry[]; now: number; viewer: Viewer }) =>
  props.entries.length === 0 ? (
    <p class="muted">The DLQ holds nothing that matches.</p>
  ) : (
    <table class="dlq">
      <thead>
        <tr>
          {canAct(props.viewer) && (
            <th>
              <input type="checkbox" data-select-all="dlqIds" aria-label="Select all" />
            </th>
          )}
          <th>Entry</th>
          <th>Destination</th>
          <th>Last response</th>
          <th>Failed</th>
        </tr>
      </thead>
      <tbody>
        {props.entries.map((entry) => (
          <tr data-dlq-id={entry.dlqId}>
            {canAct(props.viewer) && (
              <td>
                <input type="checkbox" name="dlqIds" value={entry.dlqId} aria-label={`Select ${entry.dlqId}`} />
              </td>
            )}
            <td class="mono">
              <a href={`/dashboard/dlq/${encodeURIComponent(entry.dlqId)}`}>{entry.dlqId}</a>
              <div class="muted">{entry.message.id}</div>
            </td>
            <td class="url">{entry.message.url}</td>
            <td>
              {entry.responseStatus === null ? <span class="muted">no response</span> : <span class="mono">HTTP {entry.responseStatus}</span>}
              {entry.error && <div class="muted">{entry.error.slice(0, 200)}</div>}
            </td>
            <td>
              <Time at={entry.message.completedAt} now={props.now} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

const DLQ_FIELDS = [
  ["url", "Destination URL", 32],
  ["topicName", "URL group", 12],
  ["queueName", "Queue", 12],
  ["label", "Label", 12],
  ["responseStatus", "Response status", 6],
] as const;

const Filters = ({ values }: { values: FilterValues }) => (
  <form class="filters" method="get" action="/dashboard/dlq">
    <TextFilters fields={DLQ_FIELDS} values={values} />
    <SinceFilter label="Entered the DLQ" values={values} />
    <RangeFilter values={values} />
    <FilterButtons clear="/dashboard/dlq" />
  </form>
);
