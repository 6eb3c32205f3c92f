/**
 * Retention: what has finished is removed once it is older than its
 * retention — finished messages with their attempts and log rows, DLQ
 * entries, and finished workflow runs with their steps and messages. Nothing
 * unfinished is removed; a message stays while its DLQ entry does, and a run
 * while any of its messages is in the DLQ or still pending.
 *
 * Removal is a series of bounded deletes (`BATCH` rows a statement, each its
 * own short transaction, rows locked by others skipped), paced so that it
 * works at most a set share of the time (its pace): it never holds locks long, and
 * it leaves the CPU and the disk to publishing and delivery. The space it
 * frees is reused once vacuumed. The maintenance task runs it within a time
 * budget (four minutes of each five: `retention`, the maintenance service
 * below), and stops it between two batches when the worker stops.
 */
import type postgres from "postgres";
import { setTimeout as sleep } from "node:timers/promises";
import { type Config, DEFAULT_RETENTION_PACE } from "../../config/config";
import type { Sql } from "../../db/client";
import type { MaintenanceService } from "./service";

/** How long finished things are kept, ms. */
export interface Retention {
  messagesMs: number;
  dlqMs: number;
  workflowRunsMs: number;
}

/** What one `removeExpired` removed. */
export interface Removed {
  messages: number;
  dlq: number;
  workflowRuns: number;
}

/** How a removal is paced. */
export interface Pace {
  /** Longest it works (the rest waits for the next removal); a minute by default. */
  budgetMs?: number;
  /** Share of the time it works (1: without rest); `DEFAULT_RETENTION_PACE` by default. */
  duty?: number;
  /** Stops it between two batches (a stopping worker). */
  signal?: AbortSignal;
}

/** Rows a delete statement removes at most. */
const BATCH = 1000;
/**
 * Removes what outlived its retention, batch by batch, until none is left,
 * the budget is spent or the signal aborts, working a `duty` share of the time.
 */
export async function removeExpired(sql: Sql, retention: Retention, pace: Pace = {}): Promise<Removed> {
  const { budgetMs = 60_000, duty = DEFAULT_RETENTION_PACE, signal } = pace;
  const deadline = Date.now() + budgetMs;
  const goOn = () => Date.now() < deadline && !signal?.aborted;
  const removed: Removed = { messages: 0, dlq: 0, workflowRuns: 0 };
  const drain = async (kind: keyof Removed, batch: () => Promise<number>) => {
    for (let n = BATCH; n === BATCH && goOn(); ) {
      const started = Date.now();
      removed[kind] += n = await batch();
      const rest = ((Date.now() - started) * (1 - duty)) / duty;
      if (n === BATCH) await sleep(rest, undefined, { signal }).catch(() => {});
    }
  };
  // Project by project: each table's index by time leads with the project.
  for (const { name: project } of await sql<{ name: string }[]>`select name from dispatch.projects order by name`) {
    // DLQ entries first: a message leaves only after its entry.
    await drain("dlq", () => removeDlqEntries(sql, project, retention.dlqMs));
    await drain("workflowRuns", () => removeWorkflowRuns(sql, project, retention.workflowRunsMs));
    await drain("messages", () => removeMessages(sql, project, retention.messagesMs));
  }
  return removed;
}

function removeDlqEntries(sql: Sql, project: string, ms: number): Promise<number> {
  return removeBatch(
    sql,
    sql`select dlq_id from dispatch.dlq where project = ${project} and created_at < now() - ${ms} * interval '1 millisecond'
      order by created_at limit ${BATCH} for update skip locked`,
    sql`gone as (delete from dispatch.dlq d using doomed where d.project = ${project} and d.dlq_id = doomed.dlq_id returning 1)`,
  );
}

/** Finished messages of no workflow run (a run's messages go with the run) and in no DLQ entry. */
function removeMessages(sql: Sql, project: string, ms: number): Promise<number> {
  return removeBatch(
    sql,
    sql`select m.id from dispatch.messages m
      where m.project = ${project} and ${finishedBefore(sql, "m", ms)}
        and m.workflow_run_pk is null
        and not exists (select 1 from dispatch.dlq d where d.project = ${project} and d.message_id = m.id)
      order by m.created_at limit ${BATCH} for update skip locked`,
    deleteMessages(sql, project, "doomed", "gone"),
  );
}

/** Finished runs with no message pending or in the DLQ; their steps, waiters and messages go too. */
function removeWorkflowRuns(sql: Sql, project: string, ms: number): Promise<number> {
  return removeBatch(
    sql,
    sql`select r.pk from dispatch.workflow_runs r
      where r.project = ${project} and ${finishedBefore(sql, "r", ms)}
        and not exists (
          select 1 from dispatch.messages m
          where m.project = ${project} and m.workflow_run_pk = r.pk
            and (m.completed_at is null or exists (select 1 from dispatch.dlq d where d.project = ${project} and d.message_id = m.id)))
      order by r.created_at limit ${BATCH} for update skip locked`,
    sql`messages as (select m.id from dispatch.messages m join doomed on m.workflow_run_pk = doomed.pk where m.project = ${project}),
    ${deleteMessages(sql, project, "messages", "removed")},
    gone as (delete from dispatch.workflow_runs r using doomed where r.project = ${project} and r.pk = doomed.pk returning 1)`,
  );
}

/**
 * One removal batch in one statement: `doomed` picks the rows (at most a
 * batch, locked, skipping rows others hold), `deletions` are the CTEs that
 * delete them, the last named `gone` with a row per removed one; returns how
 * many went.
 */
async function removeBatch(sql: Sql, doomed: postgres.Fragment, deletions: postgres.Fragment): Promise<number> {
  const [row] = await sql<{ n: number }[]>`with doomed as (${doomed}), ${deletions} select count(*)::int as n from gone`;
  return row!.n;
}

/**
 * The CTEs that delete the project's messages whose ids the CTE `ids` lists, with their
 * attempts and their rows of the old event log; `removed` names the last,
 * which returns a row per message.
 */
function deleteMessages(sql: Sql, project: string, ids: string, removed: string) {
  return sql`
    ${sql(`${removed}_attempts`)} as (delete from dispatch.attempts a using ${sql(ids)} i where a.project = ${project} and a.message_id = i.id),
    ${sql(`${removed}_legacy`)} as (delete from dispatch.message_events_legacy e using ${sql(ids)} i where e.message_id = i.id),
    ${sql(removed)} as (delete from dispatch.messages m using ${sql(ids)} i where m.project = ${project} and m.id = i.id returning 1)`;
}

/**
 * `alias` finished more than `ms` ago. Its creation is older still: saying so
 * lets the scan use the `created_at` index (no index may name `completed_at`,
 * which would cost the delivered update its HOT path).
 */
function finishedBefore(sql: Sql, alias: string, ms: number) {
  const before = sql`now() - ${ms} * interval '1 millisecond'`;
  return sql`${sql(alias)}.created_at < ${before} and ${sql(alias)}.completed_at < ${before}`;
}

/** Longest a maintenance run spends removing; the rest waits for the next run. */
const RETENTION_BUDGET_MS = 4 * 60_000;

/** The maintenance service: removes what expired, at DISPATCH_RETENTION_PACE, and logs what it removed. */
export const retention: MaintenanceService = {
  name: "retention",
  async run({ sql, config, log, signal }) {
    const pace = { budgetMs: RETENTION_BUDGET_MS, duty: config.retentionPace, signal };
    const removed = await removeExpired(sql, retentionOf(config), pace);
    if (removed.messages + removed.dlq + removed.workflowRuns > 0) log(removedReport(removed), { level: "info", ...removed });
  },
};

function retentionOf(config: Config): Retention {
  return { messagesMs: config.retentionMs, dlqMs: config.dlqRetentionMs, workflowRunsMs: config.workflowRetentionMs };
}

function removedReport(removed: Removed): string {
  return `retention: removed ${removed.messages} messages, ${removed.dlq} DLQ entries, ${removed.workflowRuns} workflow runs`;
}
