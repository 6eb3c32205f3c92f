/**
 * Cron expressions of schedules (docs/hosted-api.md §7.1): five fields
 * (minute, hour, day of month, month, day of week) with an optional
 * `CRON_TZ=<IANA zone>` prefix; UTC otherwise. croner computes the ticks: it
 * knows time zones and daylight-saving changes (a tick in a skipped hour
 * fires at the first valid time after it; a repeated hour fires once).
 */
import { Cron } from "croner";
import { badRequest } from "../errors";

/** A parsed cron expression. */
export interface CronSchedule {
  /** As given, surrounding whitespace trimmed. */
  text: string;
  /** The five fields. */
  pattern: string;
  /** IANA zone the fields are read in. */
  timezone: string;
}

const TZ_PREFIX = /^CRON_TZ=(\S+)\s+(.*)$/s;

/** Parses and checks `text`, or throws a 400 saying what is wrong. */
export function parseCron(text: string | undefined): CronSchedule {
  const trimmed = (text ?? "").trim();
  if (trimmed === "") throw badRequest("a cron expression is required: send the Cron header, e.g. \"*/5 * * * *\"");
  const prefixed = trimmed.match(TZ_PREFIX);
  const timezone = prefixed ? prefixed[1]! : "UTC";
  const pattern = (prefixed ? prefixed[2]! : trimmed).trim().split(/\s+/).join(" ");
  if (!isTimeZone(timezone)) throw badRequest(`unknown time zone "${timezone}" in CRON_TZ: use an IANA name such as Europe/Berlin`);
  if (pattern.split(" ").length !== 5) {
    throw badRequest(`invalid cron "${trimmed}": use five fields (minute hour day-of-month month day-of-week)`);
  }
  let next: Date | null;
  try {
    next = cronOf({ text: trimmed, pattern, timezone }).nextRun();
  } catch (error) {
    throw badRequest(`invalid cron "${trimmed}": ${(error as Error).message.replace(/^CronPattern: /, "")}`);
  }
  if (next === null) throw badRequest(`cron "${trimmed}" never fires`);
  return { text: trimmed, pattern, timezone };
}

/** The first tick strictly after `after`. */
export function nextTick(cron: CronSchedule, after: Date): Date {
  const next = cronOf(cron).nextRun(after);
  if (next === null) throw new Error(`cron "${cron.text}" has no tick after ${after.toISOString()}`);
  return next;
}

function cronOf(cron: CronSchedule): Cron {
  return new Cron(cron.pattern, { timezone: cron.timezone, mode: "5-part", paused: true });
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
