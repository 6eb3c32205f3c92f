/**
 * Firing schedules: a due tick publishes the schedule's request once and
 * moves the schedule on to its next tick, in one transaction with the row
 * locked (SKIP LOCKED), so any number of workers may look at once and each
 * tick fires exactly once. A tick that came due while no worker ran fires
 * once when one starts; the ticks it missed are skipped (catch-up policy:
 * one late tick, then the next tick after now). A tick whose publish is
 * refused (its URL group was deleted, say) produces nothing and keeps the
 * reason as the schedule's `error`. The worker fires every project's
 * schedules; each tick publishes in its schedule's project (its URL group and
 * queue are that project's, and so are the messages).
 */
import type { Sql, Transaction } from "../../db/client";
import { AppError } from "../errors";
import { insertMessages } from "../publish/insert";
import { prepareMessages, type PublishSettings } from "../publish/prepare";
import { nextTick, parseCron } from "./cron";
import { publishRequest, scheduleColumns, type ScheduleRow } from "./schedules";

/** How many due schedules one transaction fires at most. */
const BATCH = 50;

/**
 * Fires the ticks due at `now`; returns how many fired. Each schedule's
 * request is prepared on its own (a refusal is that schedule's `error`), and
 * the messages of all of them are stored with one `insertMessages`. With
 * `project`, that project's only (on Citus: `projectsWithDueTicks`).
 */
export function fireDueSchedules(sql: Sql, settings: PublishSettings, now: Date, project: string | null = null): Promise<number> {
  return sql.begin(async (tx) => {
    const due = await tx<ScheduleRow[]>`
      select ${scheduleColumns(tx)} from dispatch.schedules
      where not paused and next_tick_at <= ${now} ${inProject(tx, "project", project)}
      order by next_tick_at limit ${BATCH}
      for update skip locked`;
    if (due.length === 0) return 0;
    const prepared = await Promise.all(due.map((schedule) => prepare(tx, schedule, settings)));
    const results = await insertMessages(tx, prepared.flatMap((p) => p.messages), settings);
    let next = 0;
    const fired = due.map((schedule, i) => ({
      schedule,
      messageIds: results.slice(next, (next += prepared[i]!.messages.length)).map((result) => result.messageId),
      error: prepared[i]!.error,
    }));
    await moveOn(tx, fired, now, project);
    return due.length;
  });
}

/**
 * The projects with a tick due at `now`: on Citus, where a project's schedules
 * are its node's, each is fired apart (`fireDueSchedules` with the project),
 * since Citus locks rows (SKIP LOCKED) only in a statement routed to one node.
 */
export async function projectsWithDueTicks(sql: Sql, now: Date): Promise<string[]> {
  const rows = await sql<{ project: string }[]>`
    select distinct project from dispatch.schedules where not paused and next_tick_at <= ${now}`;
  return rows.map((row) => row.project);
}

/** `and <column> = project` when a project is given (Citus routes the statement to its node), else nothing. */
function inProject(tx: Transaction, column: string, project: string | null) {
  return project === null ? tx`` : tx`and ${tx(column)} = ${project}`;
}

/** When the next unpaused tick is due, if any schedule waits. */
export async function nextDueTick(sql: Sql): Promise<Date | null> {
  const [row] = await sql<{ at: Date | null }[]>`
    select min(next_tick_at) as at from dispatch.schedules where not paused`;
  return row?.at ?? null;
}

/** The schedule's messages for this tick, or why its publish is refused. */
async function prepare(tx: Transaction, schedule: ScheduleRow, settings: PublishSettings) {
  try {
    return { messages: (await prepareMessages(tx, publishRequest(schedule), settings)).messages, error: null };
  } catch (caught) {
    if (!(caught instanceof AppError)) throw caught;
    return { messages: [], error: caught.message };
  }
}

/** Records each fired tick and moves its schedule to the next tick after the later of the tick and `now`. */
async function moveOn(
  tx: Transaction,
  fired: { schedule: ScheduleRow; messageIds: string[]; error: string | null }[],
  now: Date,
  project: string | null,
) {
  const rows = fired.map(({ schedule, messageIds, error }) => ({
    project: schedule.project,
    id: schedule.id,
    tick: schedule.nextTickAt.toISOString(),
    next: nextTick(parseCron(schedule.cron), new Date(Math.max(now.getTime(), schedule.nextTickAt.getTime()))).toISOString(),
    messageIds: JSON.stringify(messageIds),
    error,
  }));
  const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
  await tx`
    update dispatch.schedules s
    set last_tick_at = f.tick, next_tick_at = f.next, last_error = f.error,
      last_message_ids = array(select jsonb_array_elements_text(f.message_ids::jsonb))
    from unnest(${column((r) => r.project)}::text[], ${column((r) => r.id)}::text[], ${column((r) => r.tick)}::timestamptz[],
      ${column((r) => r.next)}::timestamptz[], ${column((r) => r.messageIds)}::text[], ${column((r) => r.error)}::text[])
      as f(project, id, tick, next, message_ids, error)
    where s.project = f.project and s.id = f.id ${inProject(tx, "s.project", project)}`;
}
