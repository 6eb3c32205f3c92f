/**
 * Keyset paging, one way for every list the API pages (the DLQs, the logs,
 * the run logs): a page is at most `count` items after a cursor. A query
 * fetches one row more than it keeps, so whether another page follows is
 * known without counting, and the next cursor names the last item kept.
 * Cursors are opaque to clients; a malformed one is a 400.
 */
import type postgres from "postgres";
import type { Tx } from "../db/client";
import { badRequest } from "./errors";

/** Which page: the cursor an earlier page returned (null for the first), and at most how many items. */
export interface Page {
  cursor: string | null;
  count: number;
}

/** A page of items and, when more follow, the cursor of the next page. */
export interface PageOf<T> {
  items: T[];
  cursor: string | null;
}

/** The first `count` of `rows` (fetched with limit `count + 1`) and, when more follow, the cursor naming the last. */
export function pageOf<R>(rows: R[], count: number, cursorOf: (last: R) => string): { kept: R[]; cursor: string | null } {
  const more = rows.length > count;
  const kept = more ? rows.slice(0, count) : rows;
  return { kept, cursor: more && kept.length > 0 ? cursorOf(kept.at(-1)!) : null };
}

/** A (time, id) position as a cursor: microseconds since the epoch, a dash, the id. */
export const positionCursor = (micros: string, id: string) => `${micros}-${id}`;

/**
 * The rows strictly after (or, `descending`, before) the position a
 * `positionCursor` names, comparing the row value `(time, id)`; every row for
 * the first page.
 */
export function afterPosition(
  tx: Tx,
  cursor: string | null,
  time: postgres.Fragment,
  id: postgres.Fragment,
  descending = false,
): postgres.Fragment {
  if (cursor === null || cursor === "") return tx`true`;
  const match = /^(\d{1,18})-(.+)$/.exec(cursor);
  if (!match) throw invalidCursor(cursor);
  const position = tx`(timestamptz 'epoch' + ${match[1]!}::bigint * interval '1 microsecond', ${match[2]!}::text)`;
  return descending ? tx`(${time}, ${id}) < ${position}` : tx`(${time}, ${id}) > ${position}`;
}

/**
 * The whole number a cursor names (an event id, a row key), or null for the
 * first page. A larger number than `max` means `max`: nothing follows it and
 * everything precedes it (a client may send a timestamp as a cursor).
 */
export function integerCursor(cursor: string | null, max: bigint): bigint | null {
  if (cursor === null) return null;
  if (!/^\d{1,30}$/.test(cursor)) throw invalidCursor(cursor);
  const value = BigInt(cursor);
  return value > max ? max : value;
}

const invalidCursor = (cursor: string) => badRequest(`invalid cursor "${cursor}"`);

/**
 * The rows whose unique key (a name, an id) sorts after the cursor, which is
 * the last key of the page before (for the lists paged by name: queues, URL
 * groups, schedules, flow-control keys); every row for the first page. Read
 * in key order through the key's index, the page costs its own rows.
 */
export function afterKey(tx: Tx, cursor: string | null, key: postgres.Fragment): postgres.Fragment {
  return cursor === null || cursor === "" ? tx`true` : tx`${key} > ${cursor}`;
}

/** A page of `rows` (fetched with limit `count + 1`) in key order; the cursor is the last kept row's key. */
export function keyPageOf<R>(rows: R[], count: number, keyOf: (row: R) => string): PageOf<R> {
  const { kept, cursor } = pageOf(rows, count, keyOf);
  return { items: kept, cursor };
}
