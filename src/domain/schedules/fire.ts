/**
 * Firing schedules: a due tick publishes the schedule's request once and
 * moves the schedule on to its next tick, in one transaction with the row
 * locked (SKIP LOCKED), so any number of workers may look at once and each
 * tick fires exactly once. A tick that came due while no worker ran fires
 * once when one starts; the ticks it missed are skipped (catch-up policy:
 * one late tick, then the next tick after now). A tick whose publish is
 * refused (its URL group was deleted, say) produces nothing and keeps the
 * reason as the schedule's `error`.
 */
import type { Sql, Transaction } from "../../db/client";
import { AppError } from "../errors";
import { insertMessages } from "../publish/insert";
import { prepareMessages, type PublishSettings } from "../publish/prepare";
import { nextTick, parseCron } from "./cron";
import { publishRequest, scheduleColumns, type ScheduleRow } from "./schedules";

/** How many due schedules one transaction fires at most. */
const BATCH = 50;

/** Fires the ticks due at `now`; returns how many fired. */
export function fireDueSchedules(sql: Sql, settings: PublishSettings, now: Date): Promise<number> {
  return sql.begin(async (tx) => {
    const due = await tx<ScheduleRow[]>`
      select ${scheduleColumns(tx)} from dispatch.schedules
      where not paused and next_tick_at <= ${now}
      order by next_tick_at limit ${BATCH}
      for update skip locked`;
    for (const schedule of due) await fire(tx, schedule, settings, now);
    return due.length;
  });
}

/** When the next unpaused tick is due, if any schedule waits. */
export async function nextDueTick(sql: Sql): Promise<Date | null> {
  const [row] = await sql<{ at: Date | null }[]>`
    select min(next_tick_at) as at from dispatch.schedules where not paused`;
  return row?.at ?? null;
}

async function fire(tx: Transaction, schedule: ScheduleRow, settings: PublishSettings, now: Date): Promise<void> {
  let messageIds: string[] = [];
  let error: string | null = null;
  try {
    messageIds = await tx.savepoint(async (sp) => {
      const prepared = await prepareMessages(sp, publishRequest(schedule), settings);
      return (await insertMessages(sp, prepared.messages, settings)).map((result) => result.messageId);
    });
  } catch (caught) {
    if (!(caught instanceof AppError)) throw caught;
    error = caught.message;
  }
  const after = new Date(Math.max(now.getTime(), schedule.nextTickAt.getTime()));
  await tx`
    update dispatch.schedules
    set last_tick_at = ${schedule.nextTickAt}, next_tick_at = ${nextTick(parseCron(schedule.cron), after)},
      last_message_ids = ${messageIds}, last_error = ${error}
    where id = ${schedule.id}`;
}
