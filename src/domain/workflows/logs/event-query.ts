/**
 * The SQL behind the workflow events (events.ts): the runs, newest first,
 * that may hold events the request asks for, and the delivery events of
 * their messages — each message's creation, the retries and the failure its
 * attempts led to, its cancellation — read from the messages and the attempt
 * log of those runs only.
 */
import type postgres from "postgres";
import type { Tx } from "../../../db/client";
import type { AttemptFields } from "../../../db/queries/list-events";
import type { TimeRange } from "../../messages/filter";
import { matchRuns, type RunFilter } from "../run-filter";
import type { StepState } from "../step-states";
import { type RunRow, runColumns } from "./query";
import type { WorkflowEventState } from "./event-states";

/** Which runs: the run filter, the event states and the window of event times asked for. */
export interface EventRunSelection {
  filter: RunFilter;
  states: WorkflowEventState[] | null;
  range: TimeRange;
}

/** Where a batch of runs starts: at (or, not `inclusive`, after) the run `pk`, going to older runs. */
export interface RunBound {
  pk: number;
  inclusive: boolean;
}

/** The delivery states of a step event (the result of a step is STEP_SUCCESS, read from the step list). */
export type DeliveryState = Exclude<StepState, "STEP_SUCCESS">;

/**
 * A delivery event of a message of a run; its `nextDeliveryAt` is the first
 * attempt's time on STEP_PROGRESS, the retry's on STEP_RETRY.
 */
export interface DeliveryRow extends AttemptFields {
  runPk: number;
  messageId: string;
  state: DeliveryState;
  /** Its position in the log (the message's `seq`, the attempt's id, the `canceled_seq`), as text. */
  position: string;
}

/**
 * Up to `limit` runs from `bound` on, newest first, that match the filter and
 * may hold a matching event: a run's events are never older than the run,
 * and never newer than its end unless one of its messages or list entries
 * is; a step state needs a message that can have led to it.
 */
export function selectEventRuns(tx: Tx, project: string, selection: EventRunSelection, bound: RunBound | null, limit: number): Promise<RunRow[]> {
  const position = bound === null ? tx`true` : bound.inclusive ? tx`r.pk <= ${bound.pk}` : tx`r.pk < ${bound.pk}`;
  return tx<RunRow[]>`
    select ${runColumns(tx, project)} from dispatch.workflow_runs r
    where ${matchRuns(tx, project, selection.filter)} and ${position}
      and ${activeWithin(tx, selection.range)} and ${mayHold(tx, selection.states)}
    order by r.pk desc
    limit ${limit}`;
}

/** The delivery events of the messages of runs `runPks` (what a run's messages, not its list entries, are). */
export function selectDeliveries(tx: Tx, runPks: number[]): Promise<DeliveryRow[]> {
  return tx<DeliveryRow[]>`
    select m.workflow_run_pk as "runPk", m.id as "messageId", 'STEP_PROGRESS' as state, m.seq::text as position,
      m.created_at as at, null as error, null::int as "responseStatus", null::jsonb as "responseHeaders",
      null::bytea as "responseBody", m.not_before as "nextDeliveryAt"
    from dispatch.messages m where m.workflow_run_pk = any(${runPks}::bigint[])
    union all
    select m.workflow_run_pk, a.message_id, case when a.failure is not null then 'STEP_FAILED' else 'STEP_RETRY' end,
      a.id::text, a.recorded_at, coalesce(a.error, a.failure), a.response_status, a.response_headers, a.response_body,
      a.next_attempt_at
    from dispatch.messages m join dispatch.attempts a on a.project = m.project and a.message_id = m.id
    where m.workflow_run_pk = any(${runPks}::bigint[]) and (a.next_attempt_at is not null or a.failure is not null)
    union all
    select m.workflow_run_pk, m.id, 'STEP_CANCELED', m.canceled_seq::text, m.completed_at, null, null, null, null, null
    from dispatch.messages m where m.workflow_run_pk = any(${runPks}::bigint[]) and m.canceled_seq is not null`;
}

/** Runs that may hold an event within `range`. */
function activeWithin(tx: Tx, range: TimeRange): postgres.Fragment {
  const to = range.toDate === null ? tx`true` : tx`r.created_at <= ${new Date(range.toDate)}`;
  if (range.fromDate === null) return to;
  const from = new Date(range.fromDate);
  return tx`${to} and (r.completed_at is null or r.completed_at >= ${from}
    or exists (select 1 from dispatch.messages m
               where m.project = r.project and m.workflow_run_pk = r.pk and (m.completed_at is null or m.completed_at >= ${from}))
    or exists (select 1 from dispatch.workflow_steps s where s.project = r.project and s.run_pk = r.pk and s.created_at >= ${from}))`;
}

/** Runs that may hold an event in one of `states`; every run starts, has a result and a message. */
function mayHold(tx: Tx, states: WorkflowEventState[] | null): postgres.Fragment {
  if (states === null) return tx`true`;
  const message = (condition: postgres.Fragment) =>
    tx`exists (select 1 from dispatch.messages m where m.project = r.project and m.workflow_run_pk = r.pk and ${condition})`;
  const conditions = states.map((state): postgres.Fragment => {
    switch (state) {
      case "RUN_SUCCESS":
      case "RUN_FAILED":
      case "RUN_CANCELED":
        return tx`r.state = ${state}`;
      case "STEP_RETRY":
        return message(tx`m.retried > 0`);
      case "STEP_FAILED":
        return message(tx`m.state = 'FAILED'`);
      case "STEP_CANCELED":
        return message(tx`m.state = 'CANCELED'`);
      default:
        return tx`true`;
    }
  });
  return tx`(${conditions.reduce((any, one) => tx`${any} or ${one}`, tx`false`)})`;
}
