/**
 * Workflow run logs (docs/interface.md "Workflow run log entry", "GET
 * /v2/workflows/logs"; docs/workflow-protocol.md §12): a page of runs, newest
 * first, each with its state, its steps, what is still under way and, once it
 * failed, its failure function, with what the run asks to hide hidden
 * (logs/redaction.ts). A page takes two queries (three when a run of
 * it invoked others), whatever its number of runs and steps.
 */
import type { Tx } from "../../../db/client";
import { RUN_STATES, type RunState } from "../../../db/vocabulary";
import { badRequest } from "../../errors";
import { canonicalHeaders } from "../../headers/names";
import type { Redactor } from "../../messages/redaction";
import {
  type EntryRow,
  type InvokedRunRow,
  type RunLogQuery,
  type RunRow,
  selectEntries,
  selectInvokedRuns,
  selectRunPage,
} from "./query";
import { redactRunResponse, redactStepGroups } from "./redaction";
import {
  headerValue,
  parseStep,
  readResults,
  type ResultStep,
  type StepError,
  type StepGroup,
  stepErrors,
  stepGroups,
} from "./steps";
import { trimBodies } from "./trim";

export { RUN_STATES, type RunState };

/** Run states named in a query (any case), or a 400 naming the unknown one. */
export function runStates(names: string[]): RunState[] {
  return names.map((name) => {
    const upper = name.toUpperCase() as RunState;
    if (!RUN_STATES.includes(upper)) throw badRequest(`unknown state "${name}"; use one of ${RUN_STATES.join(", ")}`);
    return upper;
  });
}

/** A message of the run that has not finished well: under way, failed or cancelled. */
export interface NextStep {
  messageId: string;
  stepName?: string;
  state: "STEP_PROGRESS" | "STEP_RETRY" | "STEP_FAILED" | "STEP_CANCELED";
  retries: number;
  retryDelay?: string;
  nextDeliveryTime?: number;
  errors?: StepError[];
}

/** The failure function's call, once the run failed (names as the SDK's `FailureFunctionLog`). */
export interface FailureFunctionLog {
  messageId: string;
  url: string;
  state: string;
  failHeaders: Record<string, string[]>;
  failStatus: number;
  failResponse: string;
  dlqId: string;
  errors: StepError[];
  responseBody?: string;
  responseHeaders?: Record<string, string[]>;
  responseStatus?: number;
  nextDeliveryTime?: number;
  maxRetries: number;
}

/** A workflow run log entry (names as the SDK's `WorkflowRunLog`, plus the docs' caller IP and flow-control key). */
export interface RunLog {
  workflowRunId: string;
  workflowUrl: string;
  workflowState: RunState;
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  workflowRunResponse?: string;
  workflowRunCallerIp?: string;
  invoker?: { workflowRunId: string; workflowUrl: string; workflowRunCreatedAt: number };
  label?: string;
  labels?: string[];
  dlqId?: string;
  flowControlKey?: string;
  failureFunction?: FailureFunctionLog;
  steps: (StepGroup | { type: "next"; steps: NextStep[] })[];
}

/** What the logs of some runs are made of: each run's list entries and result steps (by run key), and the runs they invoked. */
export interface RunMaterial {
  entries: Map<number, EntryRow[]>;
  results: Map<number, ResultStep[]>;
  invoked: InvokedRunRow[];
}

/** Reads the material of `runs`: one query, and one more when one of them invoked others. */
export async function readRunMaterial(tx: Tx, runs: RunRow[]): Promise<RunMaterial> {
  const entries = new Map<number, EntryRow[]>(runs.map((run) => [run.pk, []]));
  if (runs.length === 0) return { entries, results: new Map(), invoked: [] };
  for (const entry of await selectEntries(tx, runs.map((run) => run.pk))) entries.get(entry.runPk)!.push(entry);
  const results = new Map(runs.map((run) => [run.pk, readResults(entries.get(run.pk)!)]));
  const invoking = runs.filter((run) => results.get(run.pk)!.some(({ step }) => step.stepType === "Invoke"));
  const invoked = invoking.length > 0 ? await selectInvokedRuns(tx, invoking) : [];
  return { entries, results, invoked };
}

/** A page of the project's run logs and, while more runs match, the cursor of the next page. */
export async function listRunLogs(
  tx: Tx,
  project: string,
  query: RunLogQuery,
  redactor: Redactor,
): Promise<{ runs: RunLog[]; cursor: string | null }> {
  const page = await selectRunPage(tx, project, query);
  if (page.runs.length === 0) return { runs: [], cursor: null };
  const material = await readRunMaterial(tx, page.runs);
  const runs = page.runs.map((run) => runLogOf(run, material, redactor));
  return { runs: trimBodies(runs, query.bodyLimit ?? null), cursor: page.cursor };
}

/** The log of `run`, made of its `material` (readRunMaterial). */
export function runLogOf(run: RunRow, { entries, results, invoked }: RunMaterial, redactor: Redactor): RunLog {
  const list = entries.get(run.pk)!;
  const groups = stepGroups(run, list, results.get(run.pk)!, invoked);
  const steps: RunLog["steps"] = redactStepGroups(groups, run, list, redactor);
  // A failed parallel branch is shown in its group, not again among the next steps.
  const failed = groups.flatMap((group) => group.steps.filter((step) => step.state === "STEP_FAILED"));
  const placed = new Set(failed.map((step) => step.messageId));
  const next = nextSteps(run, list).filter((step) => !placed.has(step.messageId));
  if (next.length > 0) steps.push({ type: "next", steps: next });
  return runLog(run, list, steps, redactor);
}

function runLog(run: RunRow, entries: EntryRow[], steps: RunLog["steps"], redactor: Redactor): RunLog {
  const failureFunction = failureFunctionLog(run, entries);
  const flowControlKey = run.config.flowControl?.key;
  return {
    workflowRunId: run.runId,
    workflowUrl: run.workflowUrl,
    workflowState: run.state,
    workflowRunCreatedAt: run.createdAt.getTime(),
    ...(run.completedAt !== null && { workflowRunCompletedAt: run.completedAt.getTime() }),
    ...(run.response !== null && { workflowRunResponse: redactRunResponse(run.response, run, redactor) }),
    ...(run.callerIp !== null && { workflowRunCallerIp: run.callerIp }),
    ...(run.invoker !== null && {
      invoker: {
        workflowRunId: run.invoker.workflowRunId,
        workflowUrl: run.invoker.workflowUrl,
        workflowRunCreatedAt: run.invoker.workflowRunCreatedAt,
      },
    }),
    // `label` is the SDK's deprecated single-label field: the first label.
    ...(run.labels !== null && run.labels.length > 0 && { label: run.labels[0], labels: run.labels }),
    ...(run.dlqId !== null && { dlqId: run.dlqId }),
    ...(flowControlKey !== undefined && { flowControlKey }),
    ...(failureFunction !== null && { failureFunction }),
    steps,
  };
}

/**
 * The failure function's call: what failed (the failed message's response),
 * how the call went (its errors, its final response) and its retry budget.
 */
function failureFunctionLog(run: RunRow, entries: EntryRow[]): FailureFunctionLog | null {
  if (run.failureCallbackMessageId === null || run.failureCallbackState === null) return null;
  const message = entries.find((entry) => entry.messageId === run.failureCallbackMessageId);
  const failure = run.failure ?? { status: 0, headers: {}, body: "" };
  const response = run.failureResponse;
  return {
    messageId: run.failureCallbackMessageId,
    url: message?.url ?? run.config.failureCallback ?? "",
    state: run.failureCallbackState,
    failHeaders: canonicalHeaders(failure.headers),
    failStatus: failure.status,
    failResponse: failure.body,
    dlqId: run.dlqId ?? "",
    errors: message === undefined ? [] : stepErrors(message),
    ...(response !== null && {
      responseBody: response.body,
      responseHeaders: canonicalHeaders(response.headers),
      responseStatus: response.status,
    }),
    ...(message?.state === "RETRY" && message.nextDeliveryAt !== null && {
      nextDeliveryTime: message.nextDeliveryAt.getTime(),
    }),
    maxRetries: message?.maxRetries ?? 0,
  };
}

/**
 * Messages of the run that have not finished well: under way (progress or
 * retry) while the run is active, failed, or cancelled. Failure callbacks
 * have their own part of the log.
 */
function nextSteps(run: RunRow, entries: EntryRow[]): NextStep[] {
  const active = run.state === "RUN_STARTED";
  return entries.flatMap((entry): NextStep[] => {
    const state = nextState(entry, active);
    if (state === null) return [];
    const errors = stepErrors(entry);
    const stepName = nextStepName(entry, errors);
    return [
      {
        messageId: entry.messageId,
        ...(stepName !== undefined && { stepName }),
        state,
        retries: entry.maxRetries ?? 0,
        ...(entry.retryDelayExpression !== null && { retryDelay: entry.retryDelayExpression }),
        ...(state === "STEP_RETRY" &&
          entry.nextDeliveryAt !== null && { nextDeliveryTime: entry.nextDeliveryAt.getTime() }),
        ...(errors.length > 0 && { errors }),
      },
    ];
  });
}

function nextState(entry: EntryRow, active: boolean): NextStep["state"] | null {
  if (entry.callType === "failureCall") return null;
  switch (entry.state) {
    // Once the run has ended, its last delivery may still be finishing: that is not "next" any more.
    case "CREATED":
    case "RETRY":
      if (!active) return null;
      return (entry.retried ?? 0) > 0 ? "STEP_RETRY" : "STEP_PROGRESS";
    // A failed third-party call does not fail the run: its callback carries the error (§6.2).
    case "FAILED":
      return entry.callType === "toCallback" ? null : "STEP_FAILED";
    case "CANCELED":
      return "STEP_CANCELED";
    default:
      return null;
  }
}

/**
 * The step a message is running: as the SDK reported it while failing (the
 * `Upstash-Error-Step-Name` response header, §10), else the branch of a plan
 * step, else the call step that a call or its callback belongs to.
 */
export function nextStepName(entry: EntryRow, errors: StepError[]): string | undefined {
  for (const error of [...errors].reverse()) {
    const reported = reportedStepName(error.headers);
    if (reported !== undefined) return reported;
  }
  if (entry.callType === "toCallback") return headerValue(entry.callbackHeaders, "workflow-stepname");
  if (entry.callType === "fromCallback") return headerValue(entry.headers, "workflow-stepname");
  const step = parseStep(entry.body);
  return step?.stepId === 0 ? step.stepName : undefined;
}

/** The step a failed attempt was running, as its answer reports it (`Upstash-Error-Step-Name`, §10). */
export function reportedStepName(headers: Record<string, string[]>): string | undefined {
  const reported = Object.entries(headers).find(([name]) => name.toLowerCase().endsWith("error-step-name"));
  return reported?.[1][0] || undefined;
}
