/**
 * Schedules (docs/hosted-api.md §7): a publish request stored with a cron
 * expression, published once per tick (fire.ts). Creating one with an
 * existing id replaces its whole configuration; the request is checked as a
 * publish would be, so a schedule that would fail to publish is refused
 * up front with the publish's 4xx. A schedule is its project's: its id is
 * unique within the project, and every function here that takes a project
 * sees and changes that project's schedules only.
 */
import type { Tx } from "../../db/client";
import { badRequest, AppError } from "../errors";
import { detectDialect, PREFIX } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import { withoutHopHeaders } from "../headers/hop-headers";
import { newScheduleId } from "../ids";
import { afterKey, keyPageOf, type Page, type PageOf } from "../paging";
import type { OptionHeader } from "../publish/option-headers";
import { prepareMessages, type PublishRequest, type PublishSettings } from "../publish/prepare";
import { checkQueueName } from "../queues/queues";
import { nextTick, parseCron } from "./cron";

/** What `POST /v2/schedules/{destination}` hands over. */
export interface ScheduleRequest {
  /** The project the schedule and the messages of its ticks belong to. */
  project: string;
  destination: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
  callerIp: string | null;
}

/** A stored schedule. */
export interface ScheduleRow {
  id: string;
  project: string;
  cron: string;
  destination: string;
  dialect: Dialect;
  headers: Record<string, string>;
  body: Buffer;
  queueName: string | null;
  callerIp: string | null;
  paused: boolean;
  nextTickAt: Date;
  lastTickAt: Date | null;
  lastMessageIds: string[];
  lastError: string | null;
  createdAt: Date;
}

/** Channel notified when a schedule's next tick may have come sooner (created, replaced, resumed): the workers look again. */
export const SCHEDULES_CHANNEL = "dispatch_schedules";

const ID = /^[A-Za-z0-9._-]{1,100}$/;
/** Credentials meant for Dispatch: never stored, never forwarded. */
const CREDENTIALS = new Set(["authorization", "proxy-authorization"]);
/** Publish headers that make no sense on a message made again every tick. */
/** Publish options of one message that a schedule, which publishes many, refuses. */
export const ONE_OFF_OPTIONS: OptionHeader[] = ["not-before", "deduplication-id", "content-based-deduplication"];

/** Creates or replaces a schedule; returns its id. A paused schedule stays paused. */
export async function saveSchedule(tx: Tx, request: ScheduleRequest, settings: PublishSettings, now = new Date()): Promise<string> {
  const dialect = detectDialect(Object.keys(request.headers), settings.limits.defaultDialect);
  const p = PREFIX[dialect].toLowerCase();
  const cron = parseCron(request.headers[`${p}cron`]);
  const id = scheduleIdOf(request.headers[`${p}schedule-id`], p);
  const queue = request.headers[`${p}queue-name`];
  const queueName = queue === undefined || queue.trim() === "" ? null : checkQueueName(queue.trim());
  const oneOff = ONE_OFF_OPTIONS.find((name) => request.headers[p + name] !== undefined);
  if (oneOff !== undefined) throw badRequest(`${p}${oneOff} cannot be used on a schedule: every tick publishes a new message`);
  const headers = storedHeaders(request.headers, p);
  await prepareMessages(tx, publishRequest({ ...request, headers, queueName, id }), settings);
  await tx`
    insert into dispatch.schedules (id, project, cron, destination, dialect, headers, body, queue_name, caller_ip, next_tick_at)
    values (${id}, ${request.project}, ${cron.text}, ${request.destination}, ${dialect}, ${tx.json(headers)}, ${request.body}, ${queueName},
      ${request.callerIp}, ${nextTick(cron, now)})
    on conflict (project, id) do update set cron = excluded.cron, destination = excluded.destination, dialect = excluded.dialect,
      headers = excluded.headers, body = excluded.body, queue_name = excluded.queue_name, caller_ip = excluded.caller_ip,
      next_tick_at = excluded.next_tick_at, last_error = null, updated_at = excluded.updated_at`;
  await tx`select pg_notify(${SCHEDULES_CHANNEL}, '')`;
  return id;
}

/** The publish request a schedule makes at each tick. */
export function publishRequest(
  schedule: Pick<ScheduleRow, "id" | "project" | "destination" | "headers" | "body" | "queueName" | "callerIp">,
): PublishRequest {
  return {
    project: schedule.project,
    destination: schedule.destination,
    headers: schedule.headers,
    body: schedule.body,
    queueName: schedule.queueName,
    callerIp: schedule.callerIp,
    scheduleId: schedule.id,
  };
}

/** The project's schedules, or its one with `id`, oldest first. */
export function listSchedules(tx: Tx, project: string, id?: string): Promise<ScheduleRow[]> {
  return tx<ScheduleRow[]>`
    select ${scheduleColumns(tx)} from dispatch.schedules
    where project = ${project} and ${id === undefined ? tx`true` : tx`id = ${id}`}
    order by created_at, id`;
}

/** A page of the project's schedules in id order (the dashboard's): those whose id sorts after `page.cursor`. */
export async function schedulePage(tx: Tx, project: string, page: Page): Promise<PageOf<ScheduleRow>> {
  const rows = await tx<ScheduleRow[]>`
    select ${scheduleColumns(tx)} from dispatch.schedules where project = ${project} and ${afterKey(tx, page.cursor, tx`id`)}
    order by id limit ${page.count + 1}`;
  return keyPageOf(rows, page.count, (schedule) => schedule.id);
}

/** The columns of a `ScheduleRow`. */
export function scheduleColumns(tx: Tx) {
  return tx`id, project, cron, destination, dialect, headers, body, queue_name as "queueName", caller_ip as "callerIp", paused,
    next_tick_at as "nextTickAt", last_tick_at as "lastTickAt", last_message_ids as "lastMessageIds",
    last_error as "lastError", created_at as "createdAt"`;
}

/**
 * The states of the messages the last tick of each of the project's
 * `schedules` made: `IN_PROGRESS`, `SUCCESS` or `FAIL`, by message id, by schedule id.
 */
export async function scheduleStates(tx: Tx, project: string, schedules: ScheduleRow[]): Promise<Map<string, Record<string, string>>> {
  const ids = schedules.flatMap((schedule) => schedule.lastMessageIds);
  const rows = ids.length === 0 ? [] : await tx<{ id: string; scheduleId: string; state: string }[]>`
    select id, schedule_id as "scheduleId",
      case when state = 'DELIVERED' then 'SUCCESS' when state in ('FAILED', 'CANCELED') then 'FAIL' else 'IN_PROGRESS' end
        as state
    from dispatch.messages where id = any(${ids}::text[]) and project = ${project}`;
  const states = new Map<string, Record<string, string>>();
  for (const row of rows) states.set(row.scheduleId, { ...states.get(row.scheduleId), [row.id]: row.state });
  return states;
}

/** One of the project's schedules, or a 404 (also when only another project has the id). */
export async function getSchedule(tx: Tx, project: string, id: string): Promise<ScheduleRow> {
  const [schedule] = await listSchedules(tx, project, id);
  if (!schedule) throw new AppError(404, `schedule ${id} not found`);
  return schedule;
}

/**
 * Deletes one of the project's schedules: no tick fires after this; messages
 * it made stay. An id the project has no schedule of changes nothing (docs/hosted-api.md §16 #24).
 */
export async function deleteSchedule(tx: Tx, project: string, id: string): Promise<void> {
  await tx`delete from dispatch.schedules where project = ${project} and id = ${id}`;
}

/**
 * Pauses (idempotently) or resumes one of the project's schedules, or a 404.
 * A paused schedule skips its ticks; resuming waits for the next tick from
 * now, so skipped ticks stay skipped.
 */
export async function setSchedulePaused(tx: Tx, project: string, id: string, paused: boolean, now = new Date()): Promise<void> {
  const schedule = tx`project = ${project} and id = ${id}`;
  const [row] = await tx<{ cron: string; paused: boolean }[]>`
    select cron, paused from dispatch.schedules where ${schedule} for update`;
  if (!row) throw new AppError(404, `schedule ${id} not found`);
  if (row.paused === paused) return;
  const next = paused ? null : nextTick(parseCron(row.cron), now);
  await tx`
    update dispatch.schedules set paused = ${paused}, next_tick_at = coalesce(${next}, next_tick_at), updated_at = now()
    where ${schedule}`;
  if (!paused) await tx`select pg_notify(${SCHEDULES_CHANNEL}, '')`;
}

function scheduleIdOf(value: string | undefined, p: string): string {
  if (value === undefined || value.trim() === "") return newScheduleId();
  const id = value.trim();
  if (!ID.test(id)) throw badRequest(`${p}schedule-id may hold only 1-100 letters, digits, ".", "_" and "-", got "${value}"`);
  return id;
}

/** The request's headers a tick publishes with: no credentials, hop headers or the schedule's own. */
function storedHeaders(headers: Record<string, string>, p: string): Record<string, string> {
  const own = new Set([`${p}cron`, `${p}schedule-id`, `${p}queue-name`]);
  const kept = Object.entries(headers).filter(([name]) => !CREDENTIALS.has(name) && !own.has(name));
  return withoutHopHeaders(Object.fromEntries(kept));
}
