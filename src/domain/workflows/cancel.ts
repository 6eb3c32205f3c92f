/**
 * Bulk cancel of workflow runs, `DELETE /v2/workflows/runs`
 * (workflow-protocol.md §9.2, §11; compat-api.md §13.1).
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import { type TimeRange, withinRange } from "../messages/filter";
import type { MessageSettings } from "../publish/options";
import { finishRun } from "./lifecycle";
import { findRun } from "./runs";

/** Filters of a bulk cancel: values of one field are OR-ed, fields AND-ed. */
export interface RunFilter {
  /** Workflow URLs, matched as prefixes unless `exactUrl`. */
  workflowUrl?: string[];
  exactUrl?: boolean;
  label?: string[];
  callerIp?: string[];
  flowControlKey?: string[];
  /** Host of the workflow URL, case-insensitive. */
  host?: string[];
  /** Path of the workflow URL (`/` when it has none). */
  path?: string[];
}

/**
 * Active runs by id (unknown or ended ids are ignored), or the active runs a
 * filter matches (created within `range`), oldest first, at most `count`. An
 * empty filter matches every active run.
 */
export type RunCancelSelection = { runIds: string[] } | { filter: RunFilter; range: TimeRange; count: number };

/** Cancels the runs `selection` picks; returns how many were cancelled (not those that had already ended). */
export async function cancelRuns(tx: Tx, selection: RunCancelSelection, settings: MessageSettings): Promise<number> {
  const picked = await tx<{ pk: number }[]>`
    select pk from dispatch.workflow_runs r
    where state = 'RUN_STARTED'
      and ${"runIds" in selection ? tx`r.run_id = any(${selection.runIds}::text[])` : matchRuns(tx, selection.filter, selection.range)}
    order by r.created_at, r.pk
    ${"count" in selection ? tx`limit ${selection.count}` : tx``}
    for update`;
  let cancelled = 0;
  for (const { pk } of picked) {
    const run = await findRun(tx, pk);
    if (run && (await finishRun(tx, run, "RUN_CANCELED", null, settings))) cancelled += 1;
  }
  return cancelled;
}

// Scheme, optional user info, then the host (a bracketed IPv6 literal or a name); and the path.
const HOST = "^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]*\\]|[^:/?#]*)";
const PATH = "^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)";

function matchRuns(tx: Tx, filter: RunFilter, range: TimeRange): postgres.Fragment {
  const conditions: postgres.Fragment[] = [withinRange(tx, tx`r.created_at`, range)];
  const on = (values: string[] | undefined, condition: (values: string[]) => postgres.Fragment) => {
    if (values !== undefined) conditions.push(condition(values));
  };
  on(filter.workflowUrl, (v) =>
    filter.exactUrl
      ? tx`r.workflow_url = any(${v}::text[])`
      : tx`r.workflow_url like any(${v.map((url) => `${url.replace(/[\\%_]/g, "\\$&")}%`)}::text[])`,
  );
  on(filter.label, (v) => tx`r.labels && ${v}::text[]`);
  on(filter.callerIp, (v) => tx`r.caller_ip = any(${v}::text[])`);
  on(filter.flowControlKey, (v) => tx`r.config->'flowControl'->>'key' = any(${v}::text[])`);
  on(filter.host, (v) => tx`lower(substring(r.workflow_url from ${HOST})) = any(${v.map((h) => h.toLowerCase())}::text[])`);
  on(filter.path, (v) => tx`coalesce(nullif(substring(r.workflow_url from ${PATH}), ''), '/') = any(${v}::text[])`);
  return conditions.reduce((all, condition) => tx`${all} and ${condition}`);
}
