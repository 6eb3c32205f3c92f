/**
 * Bulk cancel of workflow runs, `DELETE /v2/workflows/runs`
 * (docs/workflow-protocol.md §9.2, §11; docs/hosted-api.md §13.1).
 */
import type { Tx } from "../../db/client";
import { type TimeRange, withinRange } from "../messages/filter";
import type { MessageSettings } from "../publish/options";
import { finishRun } from "./lifecycle";
import { matchRuns, type RunFilter } from "./run-filter";
import { findRun } from "./runs";

/**
 * Active runs by id (unknown or ended ids are ignored), or the active runs a
 * filter matches (created within `range`), oldest first, at most `count`. An
 * empty filter matches every active run; workflow URLs match as prefixes
 * unless the request asked for exact matches.
 */
export type RunCancelSelection = { runIds: string[] } | { filter: RunFilter; range: TimeRange; count: number };

/** Cancels the runs of `project` that `selection` picks; returns how many were cancelled (not those that had already ended). */
export async function cancelRuns(tx: Tx, project: string, selection: RunCancelSelection, settings: MessageSettings): Promise<number> {
  const which =
    "runIds" in selection
      ? tx`r.run_id = any(${selection.runIds}::text[])`
      : tx`${matchRuns(tx, project, selection.filter)} and ${withinRange(tx, tx`r.created_at`, selection.range)}`;
  // The oldest first, locked in key order, as the delivery side locks runs (delivery/run-hooks.ts `lockRuns`).
  const picked = await tx<{ pk: number }[]>`
    select pk from dispatch.workflow_runs where project = ${project} and pk in (
      select pk from dispatch.workflow_runs r
      where r.project = ${project} and state = 'RUN_STARTED' and ${which}
      order by r.created_at, r.pk
      ${"count" in selection ? tx`limit ${selection.count}` : tx``})
    order by pk for update`;
  let cancelled = 0;
  for (const { pk } of picked) {
    const run = await findRun(tx, pk);
    if (run && (await finishRun(tx, run, "RUN_CANCELED", null, settings))) cancelled += 1;
  }
  return cancelled;
}
