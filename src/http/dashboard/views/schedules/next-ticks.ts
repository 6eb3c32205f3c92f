/** A schedule's coming ticks, as its page lists them, by the cron code the engine uses (domain/schedules/cron.ts). */
import { nextTick, parseCron } from "../../../../domain/schedules/cron";
import type { ScheduleRow } from "../../../../domain/schedules/schedules";

/** How many coming ticks a schedule's page shows. */
export const TICKS_SHOWN = 5;

/**
 * The schedule's next ticks: from its next tick when it is active (which may
 * be a little past, while a worker catches up), else those it would make
 * were it resumed at `now` (resuming skips the ticks missed).
 */
export function nextTicks(row: ScheduleRow, now: Date): Date[] {
  const cron = parseCron(row.cron);
  const ticks = [row.paused ? nextTick(cron, now) : row.nextTickAt];
  while (ticks.length < TICKS_SHOWN) ticks.push(nextTick(cron, ticks.at(-1)!));
  return ticks;
}
