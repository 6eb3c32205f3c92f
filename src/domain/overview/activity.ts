/**
 * What happened in the last hour, minute by minute: messages created (by the
 * state they are in now) through the index on `messages.created_at`, and
 * attempts recorded (delivered, errors, failures) through the attempts'
 * primary key. Attempt ids come from the messages' `seq` sequence, so the
 * attempts of the last hour all follow the `seq` of the newest message
 * created before it: that bound keeps the scan to the last hour's attempts.
 */
import type { Tx } from "../../db/client";

/** One minute of activity. */
export interface Minute {
  /** Unix ms of the minute's start. */
  at: number;
  delivered: number;
  /** Attempts that got an error (a retry or a failure followed). */
  errors: number;
  /** Messages that failed for good. */
  failed: number;
}

/** The last hour's activity. */
export interface Activity {
  /** Messages created in the last hour, by the state they are in now. */
  created: Record<string, number>;
  /** Sixty minutes, oldest first; minutes without attempts are zeros. */
  minutes: Minute[];
}

/** The activity of `project` in the hour before the database's `now()`. */
export async function lastHour(tx: Tx, project: string): Promise<Activity> {
  const created = await tx<{ state: string; n: number }[]>`
    select state, count(*)::int as n from dispatch.messages
    where project = ${project} and created_at >= now() - interval '1 hour' group by state`;
  const rows = await tx<MinuteRow[]>`
    select date_trunc('minute', a.recorded_at) as at,
      count(*) filter (where a.result = 'DELIVERED')::int as delivered,
      count(*) filter (where a.result = 'ERROR')::int as errors,
      count(*) filter (where a.failure is not null)::int as failed
    from dispatch.attempts a join dispatch.messages m on m.project = a.project and m.id = a.message_id
    where ${inLastHour(tx, project)} and a.project = ${project} and m.project = ${project}
    group by 1`;
  const [clock] = await tx<{ now: Date }[]>`select now()`;
  return { created: Object.fromEntries(created.map((row) => [row.state, row.n])), minutes: minutesOf(rows, clock!.now.getTime()) };
}

/**
 * The attempts `a` recorded in the last hour, read through `attempts_pkey`
 * from the `seq` of the project's newest message created before the hour
 * (attempt ids and message seqs come from one sequence, so an attempt
 * recorded since has a greater id).
 */
export function inLastHour(tx: Tx, project: string) {
  return tx`a.id > coalesce((
        select m.seq from dispatch.messages m where m.project = ${project} and m.created_at < now() - interval '1 hour'
        order by m.created_at desc limit 1), 0)
      and a.recorded_at >= now() - interval '1 hour'`;
}

type MinuteRow = Omit<Minute, "at"> & { at: Date };

function minutesOf(rows: MinuteRow[], now: number): Minute[] {
  const byMinute = new Map(rows.map((row) => [row.at.getTime(), row]));
  const last = Math.floor(now / 60_000) * 60_000;
  return Array.from({ length: 60 }, (_, index) => {
    const at = last - (59 - index) * 60_000;
    const row = byMinute.get(at);
    return { at, delivered: row?.delivered ?? 0, errors: row?.errors ?? 0, failed: row?.failed ?? 0 };
  });
}
