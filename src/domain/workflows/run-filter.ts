/**
 * Which runs a request means, one filter for the run logs, the bulk cancel
 * and the workflow DLQ: values of one field are OR-ed, fields AND-ed, and an
 * absent field does not filter. `matchRuns` is the condition on the runs row
 * `r`; each caller adds its own time window.
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import { isPending, type RunState } from "../../db/vocabulary";
import { failureFunctionState } from "./failure-function-state";
import type { StepState } from "./step-states";

/** One run named by its id and creation time (Unix ms), as `workflowRuns=ID@TS` names it. */
export interface RunKey {
  runId: string;
  createdAt: number;
}

export interface RunFilter {
  /** Runs named by id and creation time: any of them (docs/hosted-api.md §13.2 `workflowRuns`). */
  runs?: RunKey[];
  workflowRunId?: string[];
  /** Run ids that start with a `workflowRunId` value match too (bulk resume and restart). */
  runIdPrefix?: boolean;
  workflowUrl?: string[];
  /** Workflow URLs that start with a `workflowUrl` value match too (bulk cancel). */
  urlPrefix?: boolean;
  /** Unix ms of the run's creation; times are shown truncated to milliseconds, so a run matches within its millisecond. */
  workflowCreatedAt?: number[];
  state?: RunState[];
  /**
   * Runs showing a step in one of these states in their log (logs.ts): a
   * result (STEP_SUCCESS), a pending message of an active run not yet retried
   * (STEP_PROGRESS) or retried (STEP_RETRY), a failed or a cancelled message.
   * OR-ed with `state`: both come from one parameter.
   */
  stepState?: StepState[];
  /** Runs carrying any of these labels. */
  label?: string[];
  /** Runs whose step list holds one of these messages. */
  messageId?: string[];
  failureFunctionState?: string[];
  callerIp?: string[];
  flowControlKey?: string[];
  /** Host of the workflow URL, case-insensitive. */
  host?: string[];
  /** Path of the workflow URL (`/` when it has none). */
  path?: string[];
}

// Scheme, optional user info, then the host (a bracketed IPv6 literal or a name); and the path after the authority.
const HOST = "^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]*\\]|[^:/?#]*)";
const PATH = "^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)";

/** `LIKE` patterns matching what starts with each value. */
const prefixes = (values: string[]) => values.map((value) => `${value.replace(/[\\%_]/g, "\\$&")}%`);

/** The condition on the runs row `r` that holds when it is a run of `project` and `filter` matches it. */
export function matchRuns(tx: Tx, project: string, filter: RunFilter): postgres.Fragment {
  const conditions: postgres.Fragment[] = [tx`r.project = ${project}`];
  const on = <T>(values: T[] | undefined, condition: (values: T[]) => postgres.Fragment) => {
    if (values !== undefined) conditions.push(condition(values));
  };
  on(filter.runs, (v) =>
    v
      .map((key) => tx`(r.run_id = ${key.runId} and ${createdWithin(tx, key.createdAt)})`)
      .reduce((any, one) => tx`${any} or ${one}`, tx`false`),
  );
  on(filter.workflowRunId, (v) =>
    filter.runIdPrefix ? tx`r.run_id like any(${prefixes(v)}::text[])` : tx`r.run_id = any(${v}::text[])`,
  );
  on(filter.workflowUrl, (v) =>
    filter.urlPrefix ? tx`r.workflow_url like any(${prefixes(v)}::text[])` : tx`r.workflow_url = any(${v}::text[])`,
  );
  on(filter.workflowCreatedAt, (v) =>
    v.map((ms) => createdWithin(tx, ms)).reduce((any, one) => tx`${any} or ${one}`, tx`false`),
  );
  if (filter.state !== undefined || filter.stepState !== undefined) {
    const steps = (filter.stepState ?? []).map((state) => showsStep(tx, project, state));
    conditions.push(steps.reduce((any, one) => tx`${any} or ${one}`, tx`r.state = any(${filter.state ?? []}::text[])`));
  }
  on(filter.label, (v) => tx`r.labels && ${v}::text[]`);
  on(filter.messageId, (v) => tx`exists (
    select 1 from dispatch.workflow_steps s where s.project = ${project} and s.run_pk = r.pk and s.message_id = any(${v}::text[]))`);
  on(filter.failureFunctionState, (v) => tx`${failureFunctionState(tx, project)} = any(${v}::text[])`);
  on(filter.callerIp, (v) => tx`r.caller_ip = any(${v}::text[])`);
  on(filter.flowControlKey, (v) => tx`r.config->'flowControl'->>'key' = any(${v}::text[])`);
  on(filter.host, (v) => tx`lower(substring(r.workflow_url from ${HOST})) = any(${v.map((h) => h.toLowerCase())}::text[])`);
  on(filter.path, (v) => tx`coalesce(nullif(substring(r.workflow_url from ${PATH}), ''), '/') = any(${v}::text[])`);
  return conditions.reduce((all, condition) => tx`${all} and (${condition})`, tx`true`);
}

/** Created within the millisecond `ms` (times are shown truncated to milliseconds). */
function createdWithin(tx: Tx, ms: number): postgres.Fragment {
  return tx`(r.created_at >= ${new Date(ms)} and r.created_at < ${new Date(ms + 1)})`;
}

/**
 * Whether the run's log shows a step in `state` (logs.ts `nextSteps`): the
 * Initial step is a result of every run; failure callbacks are not steps,
 * and a failed call does not fail its step (docs/workflow-protocol.md §6.2).
 */
function showsStep(tx: Tx, project: string, state: StepState): postgres.Fragment {
  const message = (condition: postgres.Fragment) => tx`exists (
    select 1 from dispatch.messages m
    where m.project = ${project} and m.workflow_run_pk = r.pk and m.workflow_call_type <> 'failureCall' and ${condition})`;
  switch (state) {
    case "STEP_SUCCESS":
      return tx`exists (select 1 from dispatch.workflow_steps s where s.project = ${project} and s.run_pk = r.pk)`;
    case "STEP_PROGRESS":
      return tx`(r.state = 'RUN_STARTED' and ${message(tx`${isPending(tx, "m.state")} and m.retried = 0`)})`;
    case "STEP_RETRY":
      return tx`(r.state = 'RUN_STARTED' and ${message(tx`${isPending(tx, "m.state")} and m.retried > 0`)})`;
    case "STEP_FAILED":
      return message(tx`m.state = 'FAILED' and m.workflow_call_type <> 'toCallback'`);
    case "STEP_CANCELED":
      return message(tx`m.state = 'CANCELED'`);
  }
}
