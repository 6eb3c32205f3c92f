/**
 * The DLQ: the entries, filtered and newest first, and an entry's page (with
 * a way back to the list it was opened from); retry and delete one entry
 * (from its page or its row) or the selected ones, through the DLQ's domain
 * functions (domain/dlq/dlq.ts), as `POST /v2/dlq/retry` and `DELETE /v2/dlq` do.
 */
import { redactorFor } from "../../../redactor-for";
import { type Context, Hono } from "hono";
import type { Sql, Tx } from "../../../../db/client";
import { deleteDlqEntries, deleteDlqEntry, findDlqEntry, listDlq, retryDlqEntries, retryDlqEntry } from "../../../../domain/dlq/dlq";
import { recentRetries } from "../../../../domain/dlq/retry-links";
import { badRequest } from "../../../../domain/errors";
import { messageSettings } from "../../../../domain/publish/options";
import type { AppDeps } from "../../../deps";
import { type Params, singleParam, statusCodesParam } from "../../../query";
import type { DashboardEnv } from "../../env";
import { messageListFilter } from "../../kit/filters";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { currentUrl, nowOf } from "../../kit/page";
import { bodyViewParam, messagePath, pageParams } from "../../kit/params";
import { backLink, backPath } from "../messages/back";
import { DlqEntryPage } from "./dlq-entry-page";
import { DLQ_FILTERS, DlqPage } from "./dlq-page";
import { RECENT_RETRIES } from "./recent-retries";

const PATH = "/dashboard/dlq";
const PAGE_SIZE = 50;
/** At most this many entries are retried or deleted by one selection (a page). */
const MAX_SELECTED = 100;
/** A retry from the dashboard overrides nothing of the original. */
const NO_OVERRIDES = { headers: {}, dialect: "svc" } as const;

/** `/dashboard/dlq…`. */
export function dlqRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  return new Hono<DashboardEnv>()
    .get("/dlq", async (c) => {
      const params = pageParams(c, [...DLQ_FILTERS, "cursor", ...NOTICE_PARAMS]);
      const [now, cursor] = [nowOf(deps), singleParam(params, "cursor")];
      const { values, filter, range } = messageListFilter(params, DLQ_FILTERS, now);
      const selection = { project: c.get("project"), filter, responseStatus: statusCodesParam(params), range };
      const page = await listDlq(deps.sql, selection, { cursor, count: PAGE_SIZE, order: "latestFirst" });
      const retries = await recentRetries(deps.sql, selection.project, RECENT_RETRIES);
      const props = { page, retries, values, cursor, now, viewer: c.get("viewer"), self: currentUrl(c) };
      return c.render(<DlqPage {...props} />, { title: "DLQ", section: "dlq" });
    })
    .post(
      "/dlq/retry",
      onSelected(deps.sql, "retried-many", (tx, project, dlqIds) => retryDlqEntries(tx, { project, dlqIds }, byIds(dlqIds), NO_OVERRIDES, settings)),
    )
    .post(
      "/dlq/delete",
      onSelected(deps.sql, "deleted-many", (tx, project, dlqIds) => deleteDlqEntries(tx, { project, dlqIds }, byIds(dlqIds))),
    )
    .get("/dlq/:dlqId", async (c) => {
      const params = pageParams(c, ["body", "back", ...NOTICE_PARAMS]);
      const [entry, list] = [await findDlqEntry(deps.sql, c.get("project"), c.req.param("dlqId")), listOpenedFrom(c, params)];
      const message = redactorFor(c, deps.redactor).message(entry.message);
      const props = { entry, message, view: bodyViewParam(params), list, now: nowOf(deps), viewer: c.get("viewer") };
      const back = list === null ? { href: PATH, label: "DLQ" } : backLink(list);
      return c.render(<DlqEntryPage {...props} />, { title: entry.dlqId, section: "dlq", back });
    })
    .post("/dlq/:dlqId/retry", async (c) => {
      const result = await deps.sql.begin((tx) => retryDlqEntry(tx, c.get("project"), c.req.param("dlqId"), NO_OVERRIDES, settings));
      return doneRedirect(c, messagePath(result.messageId), "retried", result.messageId);
    })
    .post("/dlq/:dlqId/delete", async (c) => {
      const dlqId = c.req.param("dlqId");
      await deps.sql.begin((tx) => deleteDlqEntry(tx, c.get("project"), dlqId));
      return doneRedirect(c, PATH, "deleted", dlqId);
    });
}

/** An action on the entries ticked in the list's form (`act`), back to the list saying `done` and how many it took. */
function onSelected(
  sql: Sql,
  done: "retried-many" | "deleted-many",
  act: (tx: Tx, project: string, dlqIds: string[]) => Promise<{ items: unknown[] }>,
) {
  return async (c: Context<DashboardEnv>) => {
    const dlqIds = selected(c.get("form"));
    if (dlqIds.length === 0) return doneRedirect(c, PATH, "nothing-selected");
    const { items } = await sql.begin((tx) => act(tx, c.get("project"), dlqIds));
    return doneRedirect(c, PATH, done, `${items.length}`);
  };
}

/** The DLQ ids ticked in a form, at most `MAX_SELECTED`. */
function selected(form: Map<string, string>): string[] {
  const ids = (form.get("dlqIds") ?? "").split(",").filter((id) => id !== "");
  if (ids.length > MAX_SELECTED) throw badRequest(`select at most ${MAX_SELECTED} entries at a time`);
  return ids;
}

/** The DLQ list (its filters, its page) an entry's page was opened from, as its `back` parameter says; null for none. */
function listOpenedFrom(c: Context<DashboardEnv>, params: Params): string | null {
  const from = backPath(c, params);
  return from !== null && from.startsWith(`${PATH}?`) ? from : null;
}

/** The one page holding the entries `dlqIds` names. */
const byIds = (dlqIds: string[]) => ({ cursor: null, count: dlqIds.length, order: "earliestFirst" }) as const;


