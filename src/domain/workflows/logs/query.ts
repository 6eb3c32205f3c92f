/**
 * The SQL behind the workflow run logs (docs/interface.md "GET /v2/workflows/logs"):
 * one query for a page of runs, then one for the step list entries of the
 * whole page (with the message behind each entry and its errors), and — only
 * when a run of the page invoked others — one for the invoked runs.
 */
import type postgres from "postgres";
import type { Tx } from "../../../db/client";
import type { WorkflowCallType } from "../../../db/vocabulary";
import { type TimeRange, withinRange } from "../../messages/filter";
import { integerCursor, pageOf } from "../../paging";
import { failureFunctionState } from "../failure-function-state";
import { matchRuns, type RunFilter } from "../run-filter";
import type { Invoker, Run, RunConfig } from "../runs";
import type { BodyLimit } from "./trim";

/** A page request: the filter, the creation-time window, where to continue, how many runs, how bodies are shown. */
export interface RunLogQuery {
  filter: RunFilter;
  range: TimeRange;
  cursor: string | null;
  count: number;
  /** `trimBody` (trim.ts); whole bodies when absent. */
  bodyLimit?: BodyLimit;
}

/** A stored response (status, headers as received, body text) of a failed step or a failure function. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string[]>;
  body: string;
}

/** A run as the logs read it. */
export interface RunRow extends Omit<Run, "config" | "dialect" | "userHeaders" | "featureSet"> {
  config: Partial<RunConfig>;
  failure: StoredResponse | null;
  failureResponse: StoredResponse | null;
}

/** An ERROR event of a message: one failed attempt. */
export interface ErrorEvent {
  error: string | null;
  status: number | null;
  headers: Record<string, string[]> | null;
  /** Base64 of the response body. */
  body: string | null;
  time: number;
}

/**
 * One entry of a run's step list with the message behind it. The message
 * fields are null for entries that have no message (results recorded on a
 * run that had already ended).
 */
export interface EntryRow {
  runPk: number;
  /** Its place in the run's list (`dispatch.workflow_steps.seq`), as text. */
  seq: string;
  messageId: string;
  callType: WorkflowCallType;
  body: Buffer;
  createdAt: Date;
  url: string | null;
  method: string | null;
  headers: Record<string, string> | null;
  contentType: string | null;
  callbackHeaders: Record<string, string> | null;
  sourceMessageId: string | null;
  state: string | null;
  retried: number | null;
  maxRetries: number | null;
  retryDelayExpression: string | null;
  nextDeliveryAt: Date | null;
  /** What the message asks the API to hide (messages/redaction.ts). */
  redactFields: string[] | null;
  /** ERROR events, oldest first; only read for retrying and failed messages and failure callbacks. */
  errors: ErrorEvent[] | null;
}

/** A run started by `context.invoke`, with its initial payload. */
export interface InvokedRunRow {
  runId: string;
  workflowUrl: string;
  createdAt: Date;
  userHeaders: Record<string, string>;
  invoker: Invoker;
  payload: Buffer | null;
}

/**
 * A page of runs, newest first, and the cursor of the next page when more
 * runs match. Runs are ordered by their key, which follows creation order
 * (runs triggered in one batch share a creation time but not a key).
 */
export async function selectRunPage(tx: Tx, project: string, query: RunLogQuery): Promise<{ runs: RunRow[]; cursor: string | null }> {
  const rows = await tx<RunRow[]>`
    select ${runColumns(tx, project)}
    from dispatch.workflow_runs r
    where ${matchRuns(tx, project, query.filter)} and ${withinRange(tx, tx`r.created_at`, query.range)}
      and ${beforeCursor(tx, query.cursor)}
    order by r.pk desc
    limit ${query.count + 1}`;
  const { kept: runs, cursor } = pageOf(rows, query.count, (last) => String(last.pk));
  return { runs, cursor };
}

/** The columns of a `RunRow`, read from the runs row `r` of `project`. */
export function runColumns(tx: Tx, project: string): postgres.Fragment {
  return tx`r.pk, r.run_id as "runId", r.project, r.workflow_url as "workflowUrl", r.state, r.created_at as "createdAt",
    r.completed_at as "completedAt", r.config, r.labels, r.caller_ip as "callerIp", r.invoker, r.response,
    r.dlq_id as "dlqId", r.failure_callback_message_id as "failureCallbackMessageId",
    ${failureFunctionState(tx, project)} as "failureCallbackState", r.failure, r.failure_response as "failureResponse"`;
}

/** The step list entries of the runs `runPks`, in list order, with their messages. */
export function selectEntries(tx: Tx, runPks: number[]): Promise<EntryRow[]> {
  return tx<EntryRow[]>`
    select s.run_pk as "runPk", s.seq::text, s.message_id as "messageId", s.call_type as "callType", s.body,
      s.created_at as "createdAt", m.url, m.method, m.headers, m.content_type as "contentType",
      m.callback_headers as "callbackHeaders", m.source_message_id as "sourceMessageId", m.state, m.retried,
      m.max_retries as "maxRetries", m.retry_delay_expression as "retryDelayExpression",
      m.next_delivery_at as "nextDeliveryAt", m.redact_fields as "redactFields",
      case when m.state in ('RETRY', 'FAILED') or s.call_type = 'failureCall' then (
        select coalesce(json_agg(json_build_object(
          'error', e.error, 'status', e.response_status, 'headers', e.response_headers,
          'body', encode(e.response_body, 'base64'), 'time', floor(extract(epoch from e.at) * 1000)
        ) order by e.id), '[]')
        from dispatch.message_events e where e.message_id = m.id and e.state = 'ERROR'
      ) end as errors
    from dispatch.workflow_steps s left join dispatch.messages m on m.project = s.project and m.id = s.message_id
    where s.run_pk = any(${runPks}::bigint[])
    order by s.run_pk, s.seq`;
}

/** The runs invoked by `parents` (matched by project and run id here, by creation time and step by the caller). */
export function selectInvokedRuns(tx: Tx, parents: RunRow[]): Promise<InvokedRunRow[]> {
  // A child starts after its parent: the bound keeps the scan to runs newer than the oldest parent.
  const oldest = new Date(Math.min(...parents.map((run) => run.createdAt.getTime())));
  return tx<InvokedRunRow[]>`
    select c.run_id as "runId", c.workflow_url as "workflowUrl", c.created_at as "createdAt",
      c.user_headers as "userHeaders", c.invoker,
      (select s.body from dispatch.workflow_steps s where s.project = c.project and s.run_pk = c.pk order by s.seq limit 1) as payload
    from dispatch.workflow_runs c
    where c.created_at >= ${oldest} and c.invoker is not null
      and (c.project, c.invoker->>'workflowRunId') in (
        select * from unnest(${parents.map((run) => run.project)}::text[], ${parents.map((run) => run.runId)}::text[]))`;
}

/** Runs older than the last run of the previous page. */
function beforeCursor(tx: Tx, cursor: string | null): postgres.Fragment {
  const pk = integerCursor(cursor, MAX_BIGINT);
  return pk === null ? tx`true` : tx`r.pk < ${String(pk)}::bigint`;
}

const MAX_BIGINT = 2n ** 63n - 1n;
