/**
 * Stalled runs: started, with nothing that can move them on — no message of
 * the run pending, no wait registered, no run it invoked still going — for
 * longer than a grace period. A run should never be left so (a REST trigger
 * answered by something that is not a v1 SDK now fails the run instead);
 * this sweep finds the runs that are, for any other reason, marks them
 * (`workflow_runs.stalled_at`) and hands them back once, to be reported.
 * It does not end them: cancel or let them be, the operator decides.
 */
import type { Tx } from "../../db/client";
import { isPending } from "../../db/vocabulary";

/** How long a run may have nothing scheduled before it is reported: the SDK publishes its next step before it answers. */
export const STALL_GRACE_MS = 5 * 60_000;

/** A run the sweep found stalled. */
export interface StalledRun {
  runId: string;
  workflowUrl: string;
  /** When it was last moved on: its creation or the latest completion of one of its messages. */
  since: Date;
}

/** Marks the runs that stalled since the last sweep and returns them, project by project (one statement each: on Citus, one node). */
export async function markStalledRuns(tx: Tx, graceMs = STALL_GRACE_MS): Promise<StalledRun[]> {
  const stalled: StalledRun[] = [];
  for (const { name } of await tx<{ name: string }[]>`select name from dispatch.projects order by name`) {
    stalled.push(...(await markStalledRunsOf(tx, name, graceMs)));
  }
  return stalled;
}

async function markStalledRunsOf(tx: Tx, project: string, graceMs: number): Promise<StalledRun[]> {
  return tx<StalledRun[]>`
    with stalled as (
      select r.pk, greatest(r.created_at, (
        select max(m.completed_at) from dispatch.messages m where m.project = ${project} and m.workflow_run_pk = r.pk)) as since
      from dispatch.workflow_runs r
      where r.project = ${project} and r.state = 'RUN_STARTED' and r.stalled_at is null
        and not exists (
          select 1 from dispatch.messages m where m.project = ${project} and m.workflow_run_pk = r.pk and ${isPending(tx, "m.state")})
        and not exists (select 1 from dispatch.workflow_waiters w where w.project = ${project} and w.run_pk = r.pk)
        and not exists (
          select 1 from dispatch.workflow_runs c
          where c.project = ${project} and c.state = 'RUN_STARTED' and c.invoker->>'workflowRunId' = r.run_id)
      for update of r skip locked)
    update dispatch.workflow_runs r set stalled_at = now()
    from stalled s
    where r.project = ${project} and r.pk = s.pk and s.since < now() - ${graceMs} * interval '1 millisecond'
    returning r.run_id as "runId", r.workflow_url as "workflowUrl", s.since`;
}

/** The log line that reports a stalled run, with what to do about it. */
export function stalledRunReport(run: StalledRun): string {
  return (
    `workflow run ${run.runId} (${run.workflowUrl}) is started but nothing has been scheduled for it since ` +
    `${run.since.toISOString()}: no pending message, wait or invoked run; ` +
    `cancel it with DELETE /v2/workflows/runs/${run.runId}?cancel=true`
  );
}
