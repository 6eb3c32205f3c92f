/**
 * Workflow runs and their step lists (docs/workflow-protocol.md §2.2, §2.3).
 * A run is its project's: a run id names a run within one project only, so
 * every lookup by run id takes the project.
 */
import { byProject } from "../../db/citus/by-project";
import type { Tx } from "../../db/client";
import type { RunState } from "../../db/vocabulary";
import type { Dialect } from "../../db/vocabulary";
import type { WorkflowCallType } from "../../db/vocabulary";

/** Configuration of a run, taken from its init message and applied to its later messages. */
export interface RunConfig {
  maxRetries: number;
  retryDelayExpression: string | null;
  timeoutMs: number | null;
  failureCallback: string | null;
  failureCallbackHeaders: Record<string, string> | null;
  flowControl: { key: string; value: string } | null;
  /** What the API hides of every message of the run (messages/redaction.ts); absent on runs stored before it was kept. */
  redactFields?: string[] | null;
  /** Started by `POST /v2/trigger` (§3.4): its first delivery must be answered by a v1 SDK. */
  restTrigger?: boolean;
}

/** A run as the workflow code reads it. */
export interface Run {
  pk: number;
  runId: string;
  project: string;
  workflowUrl: string;
  dialect: Dialect;
  state: RunState;
  createdAt: Date;
  completedAt: Date | null;
  config: RunConfig;
  userHeaders: Record<string, string>;
  labels: string[] | null;
  featureSet: string | null;
  callerIp: string | null;
  /** The trace its steps' attempts join (null: tracing was off when it started). */
  traceparent: string | null;
  invoker: Invoker | null;
  response: string | null;
  dlqId: string | null;
  failureCallbackMessageId: string | null;
  failureCallbackState: string | null;
}

/** Who invoked a run, and how to address the parent when reporting back (§8). */
export interface Invoker {
  workflowRunId: string;
  workflowRunCreatedAt: number;
  workflowUrl: string;
  headers: Record<string, string[]>;
  step: Record<string, unknown>;
}

/** One entry of a step list on the wire (`RawStep`). */
export interface RawStep {
  messageId: string;
  body: string;
  callType: WorkflowCallType;
}

const RUN_COLUMNS = (tx: Tx) => tx`
  pk, run_id as "runId", project, workflow_url as "workflowUrl", dialect, state, created_at as "createdAt",
  completed_at as "completedAt", config, user_headers as "userHeaders", labels, feature_set as "featureSet",
  caller_ip as "callerIp", traceparent, invoker, response, dlq_id as "dlqId",
  failure_callback_message_id as "failureCallbackMessageId", failure_callback_state as "failureCallbackState"`;

/** The project's active run with `runId`, locked; null when none is active. */
export async function findActiveRun(tx: Tx, project: string, runId: string): Promise<Run | null> {
  const [run] = await tx<Run[]>`
    select ${RUN_COLUMNS(tx)} from dispatch.workflow_runs
    where project = ${project} and run_id = ${runId} and state = 'RUN_STARTED' for update`;
  return run ?? null;
}

/** The project's most recent run with `runId` (active or ended), locked; null when unknown. */
export async function findLatestRun(tx: Tx, project: string, runId: string): Promise<Run | null> {
  const [run] = await tx<Run[]>`
    select ${RUN_COLUMNS(tx)} from dispatch.workflow_runs where project = ${project} and run_id = ${runId}
    order by created_at desc, pk desc limit 1 for update`;
  return run ?? null;
}

/** Locks the runs of `messages` that belong to one, in key order (delivery/run-hooks.ts `lockRuns`), project by project. */
export async function lockRunsOf(tx: Tx, messages: { project: string; workflowRunPk: number | null }[]): Promise<void> {
  for (const [project, bound] of byProject(messages.filter((message) => message.workflowRunPk !== null), (message) => message.project)) {
    const pks = [...new Set(bound.map((message) => message.workflowRunPk!))].sort((a, b) => a - b);
    await tx`select pk from dispatch.workflow_runs where project = ${project} and pk = any(${pks}::bigint[]) order by pk for update`;
  }
}

/** The run with primary key `pk`. */
export async function findRun(tx: Tx, pk: number): Promise<Run | null> {
  const [run] = await tx<Run[]>`select ${RUN_COLUMNS(tx)} from dispatch.workflow_runs where pk = ${pk}`;
  return run ?? null;
}

/** What a new run is made of. */
export interface NewRun {
  runId: string;
  project: string;
  workflowUrl: string;
  dialect: Dialect;
  config: RunConfig;
  userHeaders: Record<string, string>;
  labels: string[];
  featureSet: string;
  callerIp: string | null;
  traceparent: string | null;
  invoker: Invoker | null;
}

/** Creates a run; null when a run with that id is already active (the trigger is deduplicated). */
export async function createRun(tx: Tx, run: NewRun): Promise<{ pk: number; createdAt: Date } | null> {
  const [row] = await tx<{ pk: number; createdAt: Date }[]>`
    insert into dispatch.workflow_runs (run_id, project, workflow_url, dialect, config, user_headers, labels, feature_set, caller_ip, traceparent, invoker)
    values (${run.runId}, ${run.project}, ${run.workflowUrl}, ${run.dialect}, ${tx.json(run.config as never)}, ${tx.json(run.userHeaders)},
      ${run.labels.length > 0 ? run.labels : null}, ${run.featureSet}, ${run.callerIp}, ${run.traceparent},
      ${run.invoker ? tx.json(run.invoker as never) : null})
    on conflict (project, run_id) where state = 'RUN_STARTED' do nothing
    returning pk, created_at as "createdAt"`;
  return row ?? null;
}

/** Appends entries to step lists, in the given order. */
export async function appendSteps(
  tx: Tx,
  steps: { runPk: number; project: string; messageId: string; callType: WorkflowCallType; body: Buffer }[],
): Promise<void> {
  if (steps.length === 0) return;
  const rows = steps.map((step, n) => ({ ...step, body: step.body.toString("base64"), n }));
  await tx`
    insert into dispatch.workflow_steps (run_pk, project, message_id, call_type, body)
    select s."runPk", s.project, s."messageId", s."callType", decode(s.body, 'base64')
    from jsonb_to_recordset(${tx.json(rows as never)})
      as s("runPk" bigint, project text, "messageId" text, "callType" text, body text, n int)
    order by s.n`;
}

/**
 * The step list of a run as RawSteps: all of it, or (with `upToMessageId`)
 * the prefix ending at that message's entry — what a delivery carries (§4.1).
 */
export async function stepList(tx: Tx, runPk: number, upToMessageId?: string): Promise<RawStep[]> {
  const rows = await tx<{ messageId: string; callType: WorkflowCallType; body: Buffer }[]>`
    select message_id as "messageId", call_type as "callType", body from dispatch.workflow_steps
    where run_pk = ${runPk}
      and ${
        upToMessageId === undefined
          ? tx`true`
          : tx`seq <= (select max(seq) from dispatch.workflow_steps where run_pk = ${runPk} and message_id = ${upToMessageId})`
      }
    order by seq`;
  return rows.map((row) => ({ messageId: row.messageId, callType: row.callType, body: row.body.toString("base64") }));
}

/** The run's initial payload: the body of its first step entry. */
export async function initialPayload(tx: Tx, runPk: number): Promise<Buffer> {
  const [row] = await tx<{ body: Buffer }[]>`
    select body from dispatch.workflow_steps where run_pk = ${runPk} order by seq limit 1`;
  return row?.body ?? Buffer.alloc(0);
}

/** Moves an active run to an end state; false when it had already ended. */
export async function endRun(
  tx: Tx,
  pk: number,
  state: Exclude<RunState, "RUN_STARTED">,
  fields: { response?: string | null; dlqId?: string | null } = {},
): Promise<boolean> {
  const ended = await tx`
    update dispatch.workflow_runs
    set state = ${state}, completed_at = now(),
      response = coalesce(${fields.response ?? null}, response), dlq_id = coalesce(${fields.dlqId ?? null}, dlq_id)
    where pk = ${pk} and state = 'RUN_STARTED'
    returning pk`;
  return ended.length > 0;
}
