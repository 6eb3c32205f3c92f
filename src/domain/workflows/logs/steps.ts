/**
 * The logged steps of a run (docs/interface.md "Step group", "Step";
 * docs/workflow-protocol.md §2.3, §2.5, §12), built from its step list: the
 * Initial step, a group per sequential result and one per parallel set, each
 * result with the details of its type (sleep, wait, call, invoke).
 */
import { parseDuration } from "../../duration";
import { canonicalHeaders } from "../../headers/names";
import type { WorkflowCallType } from "../../../db/vocabulary";
import type { EntryRow, InvokedRunRow, RunRow } from "./query";

/**
 * A logged step: the Initial step (no stepId), a result step, or a failed
 * branch of a parallel group (which has no result, only its errors).
 */
export type StepLog = {
  stepId?: number;
  stepName: string;
  stepType: string;
  callType: WorkflowCallType;
  messageId: string;
  out?: unknown;
  concurrent: number;
  state: "STEP_SUCCESS" | "STEP_FAILED";
  createdAt: number;
  headers: Record<string, string[]>;
  retries?: number;
  retryDelay?: string;
  errors?: StepError[];
} & Partial<CallDetails & InvokeDetails & SleepDetails & WaitDetails>;

/** One failed attempt of a message. */
export interface StepError {
  error: string;
  body: string;
  headers: Record<string, string[]>;
  status: number;
  time: number;
}

interface CallDetails {
  callUrl: string;
  callMethod: string;
  callHeaders: Record<string, string[]>;
  callBody: string;
  callResponseStatus: number;
  callResponseBody: string;
  callResponseHeaders: Record<string, string[]>;
}

interface InvokeDetails {
  invokedWorkflowRunId: string;
  invokedWorkflowUrl: string;
  invokedWorkflowCreatedAt: number;
  invokedWorkflowRunBody: string;
  invokedWorkflowRunHeaders: Record<string, string[]>;
}

/** Both in milliseconds (docs/interface.md "Step": sleep duration in ms, sleep-until time in Unix ms). */
interface SleepDetails {
  sleepFor: number;
  sleepUntil: number;
}

interface WaitDetails {
  waitEventId: string;
  waitTimeoutDuration: string;
  waitTimeoutDeadline: number;
  waitTimeout: boolean;
}

/** A group of logged steps; the "next" group is made by logs.ts. */
export type StepGroup = { type: "sequential"; steps: [StepLog] } | { type: "parallel"; steps: StepLog[] };

/** The Step JSON a `step` entry carries (docs/workflow-protocol.md §2.5). */
export interface StepJson {
  stepId: number;
  stepName: string;
  stepType: string;
  out?: unknown;
  concurrent?: number;
  targetStep?: number;
  sleepFor?: number | string;
  sleepUntil?: number;
  waitEventId?: string;
  timeout?: string;
  waitTimeout?: boolean;
}

/** A result step of a run and the list entry that carries it. */
export interface ResultStep {
  entry: EntryRow;
  step: StepJson;
}

/** What result steps are read against: their run, its whole list and the runs it invoked. */
interface RunContext {
  run: RunRow;
  entries: EntryRow[];
  invoked: InvokedRunRow[];
}

/**
 * The result steps of a step list, in list order. Plan steps (stepId 0) only
 * announce a parallel branch, and a result the SDK submitted twice (§4.4)
 * is logged once.
 */
export function readResults(entries: EntryRow[]): ResultStep[] {
  const seen = new Set<number>();
  const results: ResultStep[] = [];
  for (const entry of entries.slice(1)) {
    const step = entry.callType === "step" ? parseStep(entry.body) : null;
    if (step === null || step.stepId <= 0 || seen.has(step.stepId)) continue;
    seen.add(step.stepId);
    results.push({ entry, step });
  }
  return results;
}

/**
 * The Initial step and the result steps of `run` (step list `entries`),
 * grouped; a parallel branch that failed is shown failed in its group.
 */
export function stepGroups(
  run: RunRow,
  entries: EntryRow[],
  results: ResultStep[],
  invoked: InvokedRunRow[],
): StepGroup[] {
  if (entries.length === 0) return [];
  const groups: StepGroup[] = [{ type: "sequential", steps: [initialStep(entries[0]!)] }];
  let parallel: StepLog[] | null = null;
  for (const result of results) {
    const log = stepLog(result, { run, entries, invoked });
    if (log.concurrent <= 1) {
      parallel = null;
      groups.push({ type: "sequential", steps: [log] });
      continue;
    }
    // Consecutive results of one Promise.all form a group of `concurrent` steps, shown in code order.
    if (parallel === null || parallel.length >= log.concurrent || parallel[0]!.concurrent !== log.concurrent) {
      parallel = [];
      groups.push({ type: "parallel", steps: parallel });
    }
    parallel.push(log);
    parallel.sort((a, b) => a.stepId! - b.stepId!);
  }
  for (const branch of failedBranches(entries)) placeBranch(groups, branch);
  return groups;
}

/**
 * Parallel branches whose plan message (stepId 0, §4.4) failed: they never
 * produced a result, so they are logged from the plan, as failed, under the
 * step id they were planned for.
 */
function failedBranches(entries: EntryRow[]): StepLog[] {
  return entries.flatMap((entry): StepLog[] => {
    const plan = entry.callType === "step" && entry.state === "FAILED" ? parseStep(entry.body) : null;
    if (plan === null || plan.stepId !== 0 || !plan.targetStep || (plan.concurrent ?? 1) <= 1) return [];
    return [
      {
        stepId: plan.targetStep,
        stepName: plan.stepName,
        stepType: plan.stepType,
        callType: entry.callType,
        messageId: entry.messageId,
        concurrent: plan.concurrent!,
        state: "STEP_FAILED",
        createdAt: entry.createdAt.getTime(),
        headers: messageHeaders(entry),
        ...retriesOf(entry),
        errors: stepErrors(entry),
      },
    ];
  });
}

/**
 * Puts a failed branch into the parallel group of its `Promise.all` — one of
 * the same size whose step ids are within reach (a group's branches have
 * consecutive ids) and that is not full — else into a group of its own,
 * placed by step id.
 */
function placeBranch(groups: StepGroup[], branch: StepLog): void {
  const sibling = (step: StepLog) =>
    step.concurrent === branch.concurrent && Math.abs(step.stepId! - branch.stepId!) < branch.concurrent;
  const group = groups.find((g) => g.type === "parallel" && g.steps.length < branch.concurrent && g.steps.every(sibling));
  if (group) {
    group.steps.push(branch);
    group.steps.sort((a, b) => a.stepId! - b.stepId!);
    return;
  }
  const after = groups.findIndex((g) => g.steps[0]!.stepId !== undefined && g.steps[0]!.stepId > branch.stepId!);
  groups.splice(after === -1 ? groups.length : after, 0, { type: "parallel", steps: [branch] });
}

/** The errors of a message's failed attempts, oldest first. */
export function stepErrors(entry: EntryRow): StepError[] {
  return (entry.errors ?? []).map((event) => ({
    error: event.error ?? "",
    body: event.body === null ? "" : Buffer.from(event.body, "base64").toString("utf8"),
    headers: canonicalHeaders(event.headers ?? {}),
    status: event.status ?? 0,
    time: Number(event.time),
  }));
}

/** The run's first entry: its initial payload, as the SDK shows it (`stepName: "init"`). */
function initialStep(entry: EntryRow): StepLog {
  return {
    stepName: "init",
    stepType: "Initial",
    callType: "step",
    messageId: entry.messageId,
    out: entry.body.toString("utf8"),
    concurrent: 1,
    state: "STEP_SUCCESS",
    createdAt: entry.createdAt.getTime(),
    headers: messageHeaders(entry),
    ...retriesOf(entry),
  };
}

function stepLog({ entry, step }: ResultStep, context: RunContext): StepLog {
  const log: StepLog = {
    stepId: step.stepId,
    stepName: step.stepName,
    stepType: step.stepType,
    callType: entry.callType,
    messageId: entry.messageId,
    ...(step.out !== undefined && { out: step.out }),
    concurrent: step.concurrent ?? 1,
    state: "STEP_SUCCESS",
    createdAt: entry.createdAt.getTime(),
    headers: messageHeaders(entry),
    ...retriesOf(entry),
  };
  switch (step.stepType) {
    case "SleepFor":
      return { ...log, ...sleepForDetails(step) };
    case "SleepUntil":
      return { ...log, ...(typeof step.sleepUntil === "number" && { sleepUntil: step.sleepUntil * 1000 }) };
    case "Wait":
    case "WaitForWebhook":
      return { ...log, ...waitDetails(entry, step, context.entries) };
    case "Call":
      return { ...log, ...callDetails(entry, step, context.entries) };
    case "Invoke":
      return { ...log, ...invokeDetails(step, context) };
    default:
      return log;
  }
}

/** The SDK sends seconds or a duration string (docs/workflow-protocol.md §2.5); logs show milliseconds. */
function sleepForDetails(step: StepJson): Partial<SleepDetails> {
  const ms = typeof step.sleepFor === "number" ? step.sleepFor * 1000 : parseDuration(String(step.sleepFor ?? ""));
  return ms === null ? {} : { sleepFor: ms };
}

/**
 * A wait's result carries its event id and timeout (§7.2). Its deadline is
 * the timeout counted from when the attempt that registered the wait was due:
 * the branch's plan entry in a parallel group, else the preceding step entry.
 */
function waitDetails(entry: EntryRow, step: StepJson, entries: EntryRow[]): Partial<WaitDetails & { out: string }> {
  const timeout = step.timeout ?? "";
  const before = entries.slice(0, entries.indexOf(entry)).filter((e) => e.callType === "step");
  const registrar =
    (step.concurrent ?? 1) > 1 ? before.find((e) => parseStep(e.body)?.targetStep === step.stepId) : before.at(-1);
  const registeredAt = registrar?.nextDeliveryAt ?? registrar?.createdAt ?? entry.createdAt;
  return {
    ...(step.waitEventId !== undefined && { waitEventId: step.waitEventId }),
    waitTimeoutDuration: timeout,
    waitTimeoutDeadline: registeredAt.getTime() + (parseDuration(timeout) ?? 0),
    waitTimeout: step.waitTimeout === true,
    // The event data is stored base64 in `out` (§7.2); the log shows it as text.
    ...(typeof step.out === "string" && { out: Buffer.from(step.out, "base64").toString("utf8") }),
  };
}

/**
 * A call's request is its `toCallback` message, its response the body of the
 * `fromCallback` message (§6.2) — the one forwarding this step's id, else
 * the latest one before the result.
 */
function callDetails(entry: EntryRow, step: StepJson, entries: EntryRow[]): Partial<CallDetails> {
  const callbacks = entries.slice(0, entries.indexOf(entry)).filter((e) => e.callType === "fromCallback");
  const callback =
    callbacks.find((e) => headerValue(e.headers, "workflow-stepid") === String(step.stepId)) ?? callbacks.at(-1);
  if (callback === undefined) return {};
  const request = entries.find((e) => e.callType === "toCallback" && e.messageId === callback.sourceMessageId);
  const response = parseJson(callback.body) as CallbackBody | null;
  return {
    ...(request !== undefined && {
      callUrl: request.url ?? "",
      callMethod: request.method ?? "",
      callHeaders: messageHeaders(request),
      callBody: request.body.toString("utf8"),
    }),
    ...(response !== null && {
      callResponseStatus: response.status ?? 0,
      callResponseBody: Buffer.from(response.body ?? "", "base64").toString("utf8"),
      callResponseHeaders: canonicalHeaders(response.header ?? {}),
    }),
  };
}

/** The part of a callback body (docs/hosted-api.md §3.5) a call step shows. */
interface CallbackBody {
  status?: number;
  header?: Record<string, string[]>;
  body?: string;
}

/** The run this step invoked: its invoker names this run (by id and creation time) and this step (§8.2). */
function invokeDetails(step: StepJson, { run, invoked }: RunContext): Partial<InvokeDetails> {
  const child = invoked.find(
    ({ invoker }) =>
      invoker.workflowRunId === run.runId &&
      invoker.workflowRunCreatedAt === run.createdAt.getTime() &&
      (invoker.step.stepId === step.stepId || invoker.step.targetStep === step.stepId),
  );
  if (child === undefined) return {};
  return {
    invokedWorkflowRunId: child.runId,
    invokedWorkflowUrl: child.workflowUrl,
    invokedWorkflowCreatedAt: child.createdAt.getTime(),
    invokedWorkflowRunBody: child.payload?.toString("utf8") ?? "",
    invokedWorkflowRunHeaders: canonicalHeaders(child.userHeaders),
  };
}

/** The headers a message was sent with (its forwarded headers and content type). */
export function messageHeaders(entry: EntryRow): Record<string, string[]> {
  return canonicalHeaders({ ...entry.headers, ...(entry.contentType !== null && { "Content-Type": entry.contentType }) });
}

function retriesOf(entry: EntryRow): { retries?: number; retryDelay?: string } {
  return {
    ...(entry.maxRetries !== null && { retries: entry.maxRetries }),
    ...(entry.retryDelayExpression !== null && { retryDelay: entry.retryDelayExpression }),
  };
}

/** The value of the header whose name ends with `suffix` (either dialect, any case). */
export function headerValue(headers: Record<string, string> | null, suffix: string): string | undefined {
  return Object.entries(headers ?? {}).find(([name]) => name.toLowerCase().endsWith(suffix))?.[1];
}

/** The Step JSON of a `step` entry, null when the body is not one. */
export function parseStep(body: Buffer): StepJson | null {
  const step = parseJson(body) as Partial<StepJson> | null;
  const valid =
    step !== null &&
    typeof step === "object" &&
    typeof step.stepId === "number" &&
    typeof step.stepName === "string" &&
    typeof step.stepType === "string";
  return valid ? (step as StepJson) : null;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return null;
  }
}
