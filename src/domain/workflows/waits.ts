/**
 * Wait for event, notify and their timeouts (docs/workflow-protocol.md §7). A
 * waiter holds the continuation of a run; a notify (or the deadline) turns it
 * into a step message with the event data (or `waitTimeout: true`).
 * Waiters and notifications are their run's project's: a notify reaches the
 * waiters of its own project only, however their event ids match.
 */
import type { Tx } from "../../db/client";
import { cancelWaitTimeout, scheduleWaitTimeout } from "./wait-timeouts";
import { parseDuration } from "../duration";
import { AppError, badRequest } from "../errors";
import { PREFIX } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import { canonicalHeaders } from "../headers/names";
import { readWorkflowBinding } from "../headers/workflow";
import type { MessageSettings } from "../publish/options";
import { type Continuation, publishContinuation } from "./lifecycle";
import { findActiveRun, findRun } from "./runs";

/** A wait request body (§7.1). */
export interface WaitRequest {
  url: string;
  timeout?: string;
  timeoutUrl?: string;
  /** Shown on the waiter as given (the SDK never sends one); the timeout still delivers the step (§7.2). */
  timeoutBody?: string;
  timeoutHeaders?: Record<string, string[] | string>;
  step: Record<string, unknown>;
}

/** A waiter as `GET /v2/waiters` and notify responses show it (§7.4). */
export interface WaiterView {
  url: string;
  /** Unix seconds. */
  deadline: number;
  headers: Record<string, string[]>;
  timeoutUrl: string;
  timeoutBody?: string;
  timeoutHeaders: Record<string, string[]>;
}

/** What a notify answers for each waiter it resolved (§7.3). */
export interface NotifiedWaiter {
  waiter: WaiterView;
  /** The continuation step's message. */
  messageId: string;
  deduplicated: boolean;
  /** Empty when the run was resumed; else why it was not. */
  error: string;
  workflowRunId: string;
  workflowCreatedAt: number;
}

interface WaiterRow {
  id: number;
  runPk: number;
  eventId: string;
  url: string;
  headers: Record<string, string>;
  timeoutUrl: string;
  timeoutBody: string | null;
  timeoutHeaders: Record<string, string>;
  timeout: string;
  step: Record<string, unknown>;
  deadline: Date;
}

const DEFAULT_TIMEOUT = "7d";

/**
 * Registers a waiter for the run of `project` named by the request
 * `headers`; a stored lookback notification for it is consumed at once. 400
 * when the run is not active.
 */
export async function registerWait(
  tx: Tx,
  project: string,
  eventId: string,
  request: WaitRequest,
  headers: Record<string, string>,
  dialect: Dialect,
  settings: MessageSettings,
): Promise<void> {
  const runId = readWorkflowBinding(headers, dialect)?.runId;
  const run = runId ? await findActiveRun(tx, project, runId) : null;
  if (!run) throw badRequest(`workflow run ${runId ?? "(missing)"} does not exist or has already ended`);
  const timeout = request.timeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = parseDuration(timeout);
  if (timeoutMs === null) throw badRequest(`invalid wait timeout "${timeout}"`);
  const [waiter] = await tx<WaiterRow[]>`
    insert into dispatch.workflow_waiters (run_pk, project, event_id, url, headers, timeout_url, timeout_headers, timeout_body, timeout, step, deadline)
    values (${run.pk}, ${run.project}, ${eventId}, ${request.url}, ${tx.json(continuationHeaders(headers, dialect))},
      ${request.timeoutUrl ?? request.url}, ${tx.json(flatten(request.timeoutHeaders ?? {}))}, ${request.timeoutBody ?? null}, ${timeout},
      ${tx.json(request.step as never)}, now() + ${timeoutMs} * interval '1 millisecond')
    returning ${waiterColumns(tx)}`;
  const [stored] = await tx<{ id: number; body: Buffer }[]>`
    delete from dispatch.workflow_notifications
    where id = (select id from dispatch.workflow_notifications where project = ${run.project} and run_id = ${run.runId} and event_id = ${eventId}
                order by id limit 1 for update skip locked)
    returning id, body`;
  if (stored) {
    await resolveWaiter(tx, waiter!, stored.body, settings);
    return;
  }
  await scheduleWaitTimeout(tx, waiter!.id, waiter!.deadline);
}

/**
 * Notifies every waiter of `eventId` in `project` (only those of run `runId` when given;
 * then, with no waiter yet, the notification is stored for a later wait).
 * With a run id, the run row is locked before the waiters are read, as
 * `registerWait` locks it before adding its waiter: a wait and a notify of
 * one run that cross take turns, so the notify either finds the waiter or
 * leaves the notification the wait then takes. (Read first, the waiters
 * could miss one not yet committed while the wait missed the notification.)
 */
export async function notify(
  tx: Tx,
  project: string,
  eventId: string,
  body: Buffer,
  runId: string | null,
  settings: MessageSettings,
): Promise<NotifiedWaiter[]> {
  if (runId !== null) await findActiveRun(tx, project, runId);
  const waiters = await tx<WaiterRow[]>`
    select ${waiterColumns(tx)} from dispatch.workflow_waiters w
    where w.project = ${project} and w.event_id = ${eventId}
      and ${runId === null ? tx`true` : tx`w.run_pk in (select pk from dispatch.workflow_runs where project = ${project} and run_id = ${runId} and state = 'RUN_STARTED')`}
    order by w.id for update skip locked`;
  if (waiters.length === 0 && runId !== null) await storeLookback(tx, project, runId, eventId, body);
  const responses: NotifiedWaiter[] = [];
  for (const waiter of waiters) {
    const run = await findRun(tx, waiter.runPk);
    const { messageId, deduplicated, recordedOnly } = await resolveWaiter(tx, waiter, body, settings);
    responses.push({
      waiter: waiterView(waiter),
      messageId,
      deduplicated,
      error: recordedOnly ? `workflow run ${run?.runId ?? ""} has ended: the event was only recorded in its step list` : "",
      workflowRunId: run?.runId ?? "",
      workflowCreatedAt: run?.createdAt.getTime() ?? 0,
    });
  }
  return responses;
}

/** Pending lookback notifications one run may hold; more answer 429 until a wait consumes one. */
export const MAX_PENDING_NOTIFICATIONS = 20;
/** How long a lookback notification waits for its wait before it is removed. */
export const NOTIFICATION_TTL_MS = 24 * 3600_000;

/**
 * Keeps a notification for a wait that has not come yet (§7.3), bounded:
 * only for an active run (404 otherwise: nothing could ever consume it), at
 * most `MAX_PENDING_NOTIFICATIONS` per run, removed after
 * `NOTIFICATION_TTL_MS` or when the run ends (`purgeStaleNotifications`).
 * The body's size is bounded by the route (the message size limit).
 */
async function storeLookback(tx: Tx, project: string, runId: string, eventId: string, body: Buffer): Promise<void> {
  const run = await findActiveRun(tx, project, runId);
  if (!run) throw new AppError(404, `workflow run ${runId} does not exist or has ended: nothing waits for event ${eventId}`);
  // The run row's lock orders concurrent notifications of one run, so the cap holds.
  await tx`select 1 from dispatch.workflow_runs where project = ${project} and pk = ${run.pk} for update`;
  const [pending] = await tx<{ count: number }[]>`
    select count(*)::int as count from dispatch.workflow_notifications where project = ${project} and run_id = ${runId}`;
  if (pending!.count >= MAX_PENDING_NOTIFICATIONS) {
    throw new AppError(429, `workflow run ${runId} already holds ${MAX_PENDING_NOTIFICATIONS} notifications that no wait has taken`);
  }
  await tx`
    insert into dispatch.workflow_notifications (project, run_id, event_id, body) values (${project}, ${runId}, ${eventId}, ${body})`;
}

/** Removes lookback notifications that expired or whose run is no longer active; returns how many. */
export async function purgeStaleNotifications(tx: Tx): Promise<number> {
  const result = await tx`
    delete from dispatch.workflow_notifications n
    where n.created_at < now() - ${NOTIFICATION_TTL_MS} * interval '1 millisecond'
      or not exists (select 1 from dispatch.workflow_runs r
        where r.project = n.project and r.run_id = n.run_id and r.state = 'RUN_STARTED')`;
  return result.count;
}

/** Fires the timeout of waiter `id` if it still waits. */
export async function fireWaitTimeout(tx: Tx, id: number, settings: MessageSettings): Promise<void> {
  const [waiter] = await tx<WaiterRow[]>`
    delete from dispatch.workflow_waiters where id = ${id} returning ${waiterColumns(tx)}`;
  if (!waiter) return;
  const run = await findRun(tx, waiter.runPk);
  if (!run || run.state !== "RUN_STARTED") return;
  const step = { ...waiter.step, waitEventId: waiter.eventId, timeout: waiter.timeout, waitTimeout: true };
  await publishContinuation(tx, waiter.timeoutUrl, waiter.timeoutHeaders, Buffer.from(JSON.stringify(step)), run, settings);
}

/** The waiters of `eventId` in `project`. */
export async function listWaiters(tx: Tx, project: string, eventId: string): Promise<WaiterView[]> {
  const rows = await tx<WaiterRow[]>`
    select ${waiterColumns(tx)} from dispatch.workflow_waiters w
    where w.project = ${project} and w.event_id = ${eventId} order by w.id`;
  return rows.map(waiterView);
}

async function resolveWaiter(tx: Tx, waiter: WaiterRow, body: Buffer, settings: MessageSettings): Promise<Continuation> {
  await tx`delete from dispatch.workflow_waiters where id = ${waiter.id}`;
  await cancelWaitTimeout(tx, waiter.id);
  const run = await findRun(tx, waiter.runPk);
  const step = {
    ...waiter.step,
    waitEventId: waiter.eventId,
    timeout: waiter.timeout,
    waitTimeout: false,
    out: body.toString("base64"),
  };
  return publishContinuation(tx, waiter.url, waiter.headers, Buffer.from(JSON.stringify(step)), run!, settings);
}

/** The wait request's own publish headers (workflow and config headers), reused for the continuation. */
function continuationHeaders(headers: Record<string, string>, dialect: Dialect): Record<string, string> {
  const p = PREFIX[dialect].toLowerCase();
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith(p) || name === "content-type"));
}

function flatten(headers: Record<string, string[] | string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), [value].flat()[0] ?? ""]));
}

const waiterColumns = (tx: Tx) => tx`
  id, run_pk as "runPk", event_id as "eventId", url, headers, timeout_url as "timeoutUrl",
  timeout_body as "timeoutBody", timeout_headers as "timeoutHeaders", timeout, step, deadline`;

function waiterView(waiter: WaiterRow): WaiterView {
  return {
    url: waiter.url,
    deadline: Math.floor(waiter.deadline.getTime() / 1000),
    headers: canonicalHeaders(waiter.headers),
    timeoutUrl: waiter.timeoutUrl,
    // Left out when the wait gave none, as the hosted service leaves it out for the SDK's waits.
    ...(waiter.timeoutBody !== null && { timeoutBody: waiter.timeoutBody }),
    timeoutHeaders: canonicalHeaders(waiter.timeoutHeaders),
  };
}
