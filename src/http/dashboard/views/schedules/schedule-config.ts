/**
 * A schedule's configuration as a reader may see it: the publish options its
 * stored headers set (read as every tick reads them, domain/publish/options.ts),
 * with what its `Redact-Fields` hide hidden, as `GET /v2/schedules/{id}` shows
 * it; and its next ticks, by the cron code the engine uses (domain/schedules/cron.ts).
 */
import type { Redactor } from "../../../../domain/messages/redaction";
import { parsePublishOptions, type PublishLimits, type PublishOptions } from "../../../../domain/publish/options";
import { nextTick, parseCron } from "../../../../domain/schedules/cron";
import type { ScheduleRow } from "../../../../domain/schedules/schedules";

/** What each tick publishes, redacted for showing. */
export interface ShownSchedule {
  options: PublishOptions;
  /** The headers delivered, Content-Type included. */
  headers: Record<string, string>;
  body: Buffer;
}

/** The schedule's options, headers and body, with what it asks to hide hidden. */
export function shownSchedule(row: ScheduleRow, limits: PublishLimits, redactor: Redactor): ShownSchedule {
  const options = parsePublishOptions(row.headers, row.dialect, limits);
  const shown = redactor.message({
    dialect: row.dialect,
    headers: options.forwardHeaders,
    contentType: options.contentType,
    body: row.body,
    callbackHeaders: options.callback?.headers ?? null,
    failureCallbackHeaders: options.failureCallback?.headers ?? null,
    redactFields: options.redactFields,
  });
  const headers = { ...shown.headers, ...(shown.contentType !== null && { "Content-Type": shown.contentType }) };
  return { options, headers, body: shown.body };
}

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
