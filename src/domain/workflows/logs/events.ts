/**
 * Workflow events (docs/hosted-api.md §13.2, event mode): what happened to
 * runs, one entry per event, as `GET /v2/workflows/events` without `groupBy`
 * lists them. A run's events:
 *
 * - RUN_STARTED when it was created (an invoked run names its invoker);
 * - STEP_SUCCESS for each result in its step list, as the run logs show the
 *   step (logs.ts), when it was recorded — a resumed run's results copied
 *   from the failed run are that run's events, not this one's;
 * - for each of its messages (steps, calls, call results, failure
 *   callbacks): STEP_PROGRESS when it was created (its first attempt is then
 *   due), STEP_RETRY for each failed attempt that led to a retry, STEP_FAILED
 *   when its last attempt failed it, STEP_CANCELED when it was cancelled;
 * - RUN_SUCCESS, RUN_FAILED or RUN_CANCELED when it ended.
 *
 * Events come run by run, newest run first as in the run logs, each run's
 * newest first; what a run asks to hide is hidden as in the run logs
 * (redaction.ts). A cursor names a run and an event of it, so events that
 * arrive meanwhile never shift a page.
 */
import type { Tx } from "../../../db/client";
import { badRequest } from "../../errors";
import { canonicalHeaders } from "../../headers/names";
import type { WorkflowCallType } from "../../../db/vocabulary";
import type { Redactor } from "../../messages/redaction";
import { pageOf } from "../../paging";
import { type DeliveryRow, type DeliveryState, type EventRunSelection, type RunBound, selectDeliveries, selectEventRuns } from "./event-query";
import type { WorkflowEventState } from "./event-states";
import { nextStepName, type RunMaterial, readRunMaterial, reportedStepName } from "./logs";
import type { EntryRow, RunRow } from "./query";
import { redactRunResponse, redactStepGroups } from "./redaction";
import { messageHeaders, type StepLog, stepErrors, stepGroups } from "./steps";
import { type BodyLimit, trimBodies } from "./trim";

/** A page request of events. */
export interface EventQuery extends EventRunSelection {
  cursor: string | null;
  count: number;
  bodyLimit: BodyLimit;
}

/** What a step event tells of a message delivering a step (as the run logs' "next" steps). */
export interface DeliveryInfo {
  messageId: string;
  callType: WorkflowCallType;
  state: DeliveryState;
  createdAt: number;
  retries: number;
  retryDelay?: string;
  stepName?: string;
  nextDeliveryTime?: number;
}

/** A workflow event (names as the hosted description's `WorkflowEvent`). */
export interface WorkflowEvent {
  time: number;
  state: WorkflowEventState;
  workflowRunId: string;
  workflowUrl: string;
  workflowCreatedAt: number;
  /** The step: a result as the run logs show it (without its headers, which are the event's), or a delivery. */
  stepInfo?: Omit<StepLog, "headers"> | DeliveryInfo;
  nextDeliveryTime?: number;
  error?: string;
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, string[]>;
  /** The headers of the event's message (RUN_STARTED: of the init message). */
  headers?: Record<string, string[]>;
  invokerWorkflowRunId?: string;
  invokerWorkflowUrl?: string;
  invokerWorkflowCreatedAt?: number;
  workflowRunResponse?: string;
  dlqId?: string;
  label?: string;
  labels?: string[];
  callerIp?: string;
}

/**
 * Where an event sorts within its run: its time (ms), its rank among events
 * of one millisecond (a run starts before its first result, a message's
 * result before its delivery, a step's failure before the run's), and its
 * position in the log of its kind.
 */
type EventKey = [time: number, rank: number, position: bigint];

interface KeyedEvent {
  event: WorkflowEvent;
  key: EventKey;
}

/** Runs read per query while a page fills. */
const RUN_BATCH = 20;

/** A page of events and, while more match, the cursor of the next page. */
export async function listWorkflowEvents(
  tx: Tx,
  project: string,
  query: EventQuery,
  redactor: Redactor,
): Promise<{ events: WorkflowEvent[]; cursor: string | null }> {
  const after = parseCursor(query.cursor);
  const picked: (KeyedEvent & { runPk: number })[] = [];
  let bound: RunBound | null = after && { pk: after.runPk, inclusive: true };
  while (picked.length <= query.count) {
    const runs = await selectEventRuns(tx, project, query, bound, RUN_BATCH);
    const material = await readRunMaterial(tx, runs);
    const deliveries = await readDeliveries(tx, runs);
    for (const run of runs) {
      const from = after?.runPk === run.pk ? after.key : null;
      const events = runEvents(run, material, deliveries.get(run.pk) ?? [], redactor);
      for (const keyed of events) {
        if (matches(keyed.event, query) && (from === null || compareKeys(keyed.key, from) < 0)) picked.push({ ...keyed, runPk: run.pk });
      }
    }
    if (runs.length < RUN_BATCH) break;
    bound = { pk: runs.at(-1)!.pk, inclusive: false };
  }
  const { kept, cursor } = pageOf(picked, query.count, (last) => [last.runPk, ...last.key].join("."));
  return { events: kept.map((keyed) => trimBodies(keyed.event, query.bodyLimit)), cursor };
}

/** The delivery events of `runs`, by run key. */
async function readDeliveries(tx: Tx, runs: RunRow[]): Promise<Map<number, DeliveryRow[]>> {
  const byRun = new Map<number, DeliveryRow[]>(runs.map((run) => [run.pk, []]));
  if (runs.length === 0) return byRun;
  for (const row of await selectDeliveries(tx, runs.map((run) => run.pk))) byRun.get(row.runPk)!.push(row);
  return byRun;
}

function matches(event: WorkflowEvent, query: EventQuery): boolean {
  const { fromDate, toDate } = query.range;
  return (
    (query.states === null || query.states.includes(event.state)) &&
    (fromDate === null || event.time >= fromDate) &&
    (toDate === null || event.time <= toDate)
  );
}

/** The events of `run`, newest first. */
function runEvents(run: RunRow, material: RunMaterial, deliveries: DeliveryRow[], redactor: Redactor): KeyedEvent[] {
  const entries = material.entries.get(run.pk) ?? [];
  const about = aboutRun(run);
  const events: KeyedEvent[] = [startEvent(run, entries[0], about, redactor)];
  const groups = redactStepGroups(stepGroups(run, entries, material.results.get(run.pk) ?? [], material.invoked), run, entries, redactor);
  const seqOf = new Map(entries.map((entry) => [entry.messageId, BigInt(entry.seq)]));
  for (const { headers, ...stepInfo } of groups.flatMap((group) => group.steps)) {
    if (stepInfo.state !== "STEP_SUCCESS" || stepInfo.createdAt < run.createdAt.getTime()) continue;
    const event = { time: stepInfo.createdAt, state: "STEP_SUCCESS" as const, ...about, stepInfo, headers };
    events.push({ event, key: [stepInfo.createdAt, 1, seqOf.get(stepInfo.messageId) ?? 0n] });
  }
  const entryOf = new Map(entries.map((entry) => [entry.messageId, entry]));
  for (const row of deliveries) events.push(deliveryEvent(row, entryOf.get(row.messageId), run, about, redactor));
  if (run.completedAt !== null) events.push(endEvent(run, about, redactor));
  return events.sort((a, b) => compareKeys(b.key, a.key));
}

/** What every event of `run` says of it. */
function aboutRun(run: RunRow) {
  return {
    workflowRunId: run.runId,
    workflowUrl: run.workflowUrl,
    workflowCreatedAt: run.createdAt.getTime(),
    ...(run.labels !== null && run.labels.length > 0 && { label: run.labels[0], labels: run.labels }),
    ...(run.callerIp !== null && { callerIp: run.callerIp }),
  };
}

function startEvent(run: RunRow, init: EntryRow | undefined, about: ReturnType<typeof aboutRun>, redactor: Redactor): KeyedEvent {
  const time = run.createdAt.getTime();
  const fields = init?.redactFields ?? run.config.redactFields ?? null;
  const event: WorkflowEvent = {
    time,
    state: "RUN_STARTED",
    ...about,
    ...(init !== undefined && { headers: redactor.headers(messageHeaders(init), fields) }),
    ...(run.invoker !== null && {
      invokerWorkflowRunId: run.invoker.workflowRunId,
      invokerWorkflowUrl: run.invoker.workflowUrl,
      invokerWorkflowCreatedAt: run.invoker.workflowRunCreatedAt,
    }),
  };
  return { event, key: [time, 0, 0n] };
}

function endEvent(run: RunRow, about: ReturnType<typeof aboutRun>, redactor: Redactor): KeyedEvent {
  const time = run.completedAt!.getTime();
  const event: WorkflowEvent = {
    time,
    state: run.state,
    ...about,
    ...(run.state === "RUN_SUCCESS" && run.response !== null && { workflowRunResponse: redactRunResponse(run.response, run, redactor) }),
    ...(run.state === "RUN_FAILED" && run.dlqId !== null && { dlqId: run.dlqId }),
  };
  return { event, key: [time, 4, 0n] };
}

/**
 * A delivery event of the message behind list entry `entry`: what its
 * attempt answered (a failed attempt's response is what the workflow
 * answered, not message data, and stays visible, as in the run logs).
 */
function deliveryEvent(
  row: DeliveryRow,
  entry: EntryRow | undefined,
  run: RunRow,
  about: ReturnType<typeof aboutRun>,
  redactor: Redactor,
): KeyedEvent {
  const time = row.at.getTime();
  const due = row.nextDeliveryAt === null || row.state === "STEP_FAILED" || row.state === "STEP_CANCELED" ? undefined : row.nextDeliveryAt.getTime();
  const stepName = reportedStepName(row.responseHeaders ?? {}) ?? (entry && nextStepName(entry, stepErrors(entry)));
  const stepInfo: DeliveryInfo = {
    messageId: row.messageId,
    callType: entry?.callType ?? "step",
    state: row.state,
    createdAt: entry?.createdAt.getTime() ?? time,
    retries: entry?.maxRetries ?? 0,
    ...(entry !== undefined && entry.retryDelayExpression !== null && { retryDelay: entry.retryDelayExpression }),
    ...(stepName !== undefined && { stepName }),
    ...(due !== undefined && { nextDeliveryTime: due }),
  };
  const fields = entry?.redactFields ?? run.config.redactFields ?? null;
  const event: WorkflowEvent = {
    time,
    state: row.state,
    ...about,
    stepInfo,
    ...(due !== undefined && { nextDeliveryTime: due }),
    ...(row.error !== null && { error: row.error }),
    ...(row.responseStatus !== null && { responseStatus: row.responseStatus }),
    ...(row.responseBody !== null && { responseBody: row.responseBody.toString("utf8") }),
    ...(row.responseHeaders !== null && { responseHeaders: canonicalHeaders(row.responseHeaders) }),
    ...(entry !== undefined && { headers: redactor.headers(messageHeaders(entry), fields) }),
  };
  return { event, key: [time, row.state === "STEP_PROGRESS" ? 2 : 3, BigInt(row.position)] };
}

function compareKeys(a: EventKey, b: EventKey): number {
  return a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
}

/** The run and event a cursor names (`<run key>.<time>.<rank>.<position>`), or null for the first page. */
function parseCursor(cursor: string | null): { runPk: number; key: EventKey } | null {
  if (cursor === null || cursor === "") return null;
  const match = /^(\d{1,18})\.(\d{1,15})\.([0-4])\.(\d{1,19})$/.exec(cursor);
  if (!match) throw badRequest(`invalid cursor "${cursor}"`);
  return { runPk: Number(match[1]), key: [Number(match[2]), Number(match[3]), BigInt(match[4]!)] };
}
