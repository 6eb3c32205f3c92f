/**
 * A page of the event log, read part by part. The view
 * `dispatch.message_events` spells the log out for SQL readers, but no
 * planner reads a union of derived rows in index order, so a page is read
 * from each part separately — legacy events, CREATED (the message rows),
 * attempts (`dispatch.attempt_events`), cancellations — each in the order of
 * its own index and cut at the page size, then merged by `(seq, n)`.
 */
import type postgres from "postgres";
import type { Tx } from "../client";

/** What an event says of an attempt: its error, the answer, and when the next attempt is due. */
export interface AttemptFields {
  at: Date;
  error: string | null;
  responseStatus: number | null;
  responseHeaders: Record<string, string[]> | null;
  responseBody: Buffer | null;
  nextDeliveryAt: Date | null;
}

/** An event as stored or derived; `messageId` names the message row `m` the conditions see. */
export interface EventRow extends AttemptFields {
  seq: string;
  n: number;
  messageId: string;
  state: string;
}

/** Which events, in which order. Conditions may name the event `e` (state, at) and its message `m`. */
export interface EventSelection {
  /** Condition on `e` and `m`. */
  where: postgres.Fragment;
  /** Strictly after this event id in the page's order; null from the start. */
  after: bigint | null;
  latestFirst: boolean;
  limit: number;
}

const COLUMNS = `e.message_id as "messageId", e.state, e.at, e.error, e.response_status as "responseStatus",
  e.response_headers as "responseHeaders", e.response_body as "responseBody", e.next_delivery_at as "nextDeliveryAt"`;

/** The first `limit` events of the selection, in its order. */
export async function listEvents(tx: Tx, selection: EventSelection): Promise<EventRow[]> {
  const parts = await Promise.all([legacy, created, attempted, cancelled].map((part) => part(tx, selection)));
  const direction = selection.latestFirst ? -1 : 1;
  return parts
    .flat()
    .sort((a, b) => direction * (compareSeq(a.seq, b.seq) || a.n - b.n))
    .slice(0, selection.limit);
}

type Part = (tx: Tx, selection: EventSelection) => Promise<EventRow[]>;

const legacy: Part = (tx, s) => tx<EventRow[]>`
  select (e.id / 8)::text as seq, (e.id % 8)::int as n, ${tx.unsafe(COLUMNS)}
  from dispatch.message_events_legacy e join dispatch.messages m on m.id = e.message_id
  where ${s.where} and ${s.after === null ? tx`true` : s.latestFirst ? tx`e.id < ${String(s.after)}` : tx`e.id > ${String(s.after)}`}
  order by ${order(tx, s, tx`e.id`)} limit ${s.limit}`;

const created: Part = (tx, s) => tx<EventRow[]>`
  select e.seq::text, 0 as n, ${tx.unsafe(COLUMNS)}
  from dispatch.messages m, lateral (
    select m.seq, m.id as message_id, 'CREATED' as state, m.created_at as at, null::text as error,
      null::int as response_status, null::jsonb as response_headers, null::bytea as response_body,
      null::timestamptz as next_delivery_at) e
  where m.seq > (select (value #>> '{}')::bigint from dispatch.settings where key = 'event_log_start')
    and ${s.where} and ${after(tx, s, tx`m.seq`, tx`0`)}
  order by ${order(tx, s, tx`m.seq`)} limit ${s.limit}`;

const attempted: Part = (tx, s) => tx<EventRow[]>`
  select a.id::text as seq, e.n, ${tx.unsafe(COLUMNS.replace("e.message_id", "a.message_id"))}
  from dispatch.attempts a join dispatch.messages m on m.project = a.project and m.id = a.message_id
    cross join lateral dispatch.attempt_events(a.started_at, a.result, a.recorded_at, a.error, a.response_status,
      a.response_headers, a.response_body, a.next_attempt_at, a.failure, a.note) e
  where ${s.where} and ${after(tx, s, tx`a.id`, tx`e.n`)}
  order by ${order(tx, s, tx`a.id`)}, ${s.latestFirst ? tx`e.n desc` : tx`e.n`} limit ${s.limit}`;

const cancelled: Part = (tx, s) => tx<EventRow[]>`
  select m.canceled_seq::text as seq, c.n, m.id as "messageId", c.state, m.completed_at as at, null as error,
    null as "responseStatus", null as "responseHeaders", null as "responseBody", null as "nextDeliveryAt"
  from dispatch.messages m
    cross join (values (0, 'CANCEL_REQUESTED'), (1, 'CANCELED')) as c(n, state),
    lateral (select c.state, m.completed_at as at) e
  where m.canceled_seq is not null and ${s.where} and ${after(tx, s, tx`m.canceled_seq`, tx`c.n`)}
  order by ${order(tx, s, tx`m.canceled_seq`)}, ${s.latestFirst ? tx`c.n desc` : tx`c.n`} limit ${s.limit}`;

/** `(seq, n)` strictly after the selection's cursor; the bound on `seq` alone lets the index cut the scan. */
function after(tx: Tx, s: EventSelection, seq: postgres.Fragment, n: postgres.Fragment): postgres.Fragment {
  if (s.after === null) return tx`true`;
  const [cursorSeq, cursorN] = [String(s.after / 8n), Number(s.after % 8n)];
  return s.latestFirst
    ? tx`${seq} <= ${cursorSeq}::bigint and (${seq}, ${n}) < (${cursorSeq}::bigint, ${cursorN}::int)`
    : tx`${seq} >= ${cursorSeq}::bigint and (${seq}, ${n}) > (${cursorSeq}::bigint, ${cursorN}::int)`;
}

function order(tx: Tx, s: EventSelection, column: postgres.Fragment): postgres.Fragment {
  return s.latestFirst ? tx`${column} desc` : column;
}

function compareSeq(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
