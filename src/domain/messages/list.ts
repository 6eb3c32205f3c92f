/**
 * Listing messages, newest first, for the dashboard: a page of summaries
 * (no bodies or headers) with keyset paging on `(created_at, id)`, read
 * through the index on `messages.created_at`. Filters on columns without an
 * index (state, URL, URL group, queue, label) are applied to a bounded scan of
 * at most `SCAN_LIMIT` messages per page: a page that found fewer matches
 * says how far it searched, and its cursor continues from there, so no page
 * ever reads the whole table. Each message of the page comes with its last
 * attempt's answer (`attempts_message_id_idx`, one row each), whether it
 * waits in a paused queue (`queues_pkey`) and, for a message retried from
 * the DLQ, the retry and its state (`messages_pkey`).
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import type { MessageState } from "../../db/vocabulary";
import { afterPosition } from "../paging";
import { matchMessages, type MessageFilter, type TimeRange, withinRange } from "./filter";
import { ANSWER_BYTES, type LastAnswer } from "./attempts";

/** Messages one page scans at most when filters are given. */
export const SCAN_LIMIT = 20_000;

/** Which messages, and which page of them. */
export interface MessageListQuery {
  /** Whose messages: a project lists its own, through `messages_project_created_at_idx`. */
  project: string;
  states: MessageState[] | null;
  filter: MessageFilter;
  range: TimeRange;
  /** From an earlier page; null for the newest. */
  cursor: string | null;
  count: number;
}

/** A message as a list shows it. */
export interface MessageSummary {
  id: string;
  state: MessageState;
  url: string;
  topicName: string | null;
  endpointName: string | null;
  queueName: string | null;
  flowControlKey: string | null;
  api: string | null;
  labels: string[] | null;
  retried: number;
  maxRetries: number;
  scheduleId: string | null;
  origin: string;
  createdAt: Date;
  /** When it is attempted next, unless it waits in a paused queue (`queuePaused`): then not before a resume. */
  nextDeliveryAt: Date;
  completedAt: Date | null;
  /** Pending in a queue that is paused: nothing attempts it until the queue is resumed. */
  queuePaused: boolean;
  /** The last attempt's answer; null before the first attempt. */
  last: LastAnswer | null;
  /** The message its DLQ entry's retry published, and that message's state (null once removed by retention). */
  retriedAs: { id: string; state: MessageState | null } | null;
}

/** A page of messages. */
export interface MessageListPage {
  items: MessageSummary[];
  /** The next page's cursor, null at the end. */
  cursor: string | null;
  /** Set when the scan limit ended the page: the time the search reached. */
  searchedTo: Date | null;
}

/** A page of the messages `query` picks, newest first. */
export async function listMessages(tx: Tx, query: MessageListQuery): Promise<MessageListPage> {
  const filtered = query.states !== null || Object.keys(query.filter).length > 0;
  const scan = filtered ? SCAN_LIMIT : query.count + 1;
  const rows = await tx<Row[]>`
    with scanned as materialized (
      select m.id, m.state, m.url, m.topic_name, m.endpoint_name, m.queue_name, m.api, m.labels, m.retried,
        m.max_retries, m.schedule_id, m.origin, m.created_at, m.next_delivery_at, m.completed_at, m.flow_control_key,
        m.caller_ip, m.retried_as, m.project, m.pending_queue
      from dispatch.messages m
      where m.project = ${query.project} and ${withinRange(tx, tx`m.created_at`, query.range)} and ${after(tx, query.cursor)}
      order by m.created_at desc, m.id desc
      limit ${scan}
    ), matched as (
      select * from scanned m
      where ${query.states === null ? tx`true` : tx`m.state = any(${query.states}::text[])`}
        and ${matchMessages(tx, query.filter)}
      order by m.created_at desc, m.id desc
      limit ${query.count + 1}
    ), info as (
      select count(*)::int as scanned,
        (select ${position(tx)} from scanned m order by m.created_at, m.id limit 1) as oldest
      from scanned
    )
    select i.scanned, i.oldest, m.id, m.state, m.url, m.topic_name as "topicName", m.endpoint_name as "endpointName",
      m.queue_name as "queueName", m.flow_control_key as "flowControlKey", m.api, m.labels, m.retried, m.max_retries as "maxRetries",
      m.schedule_id as "scheduleId", m.origin, m.created_at as "createdAt", m.next_delivery_at as "nextDeliveryAt",
      m.completed_at as "completedAt", ${position(tx)} as position,
      coalesce(q.paused, false) as "queuePaused",
      a.response_status as "lastStatus", a.error as "lastError", a.body as "lastBody", a.id is not null as attempted,
      m.retried_as as "retriedAs", r.state as "retryState"
    from info i left join matched m on true
      left join lateral (
        select response_status, error, substring(response_body from 1 for ${ANSWER_BYTES}) as body, id from dispatch.attempts
        where message_id = m.id order by id desc limit 1) a on true
      left join dispatch.messages r on r.id = m.retried_as and r.project = m.project
      left join dispatch.queues q on q.project = m.project and q.name = m.pending_queue
    order by m.created_at desc, m.id desc`;
  return pageOf(rows, query.count, scan);
}

type Row = Omit<MessageSummary, "last" | "retriedAs"> & {
  position: string;
  scanned: number;
  oldest: string | null;
  lastStatus: number | null;
  lastError: string | null;
  lastBody: Buffer | null;
  attempted: boolean;
  retriedAs: string | null;
  retryState: MessageState | null;
};

/** A row's `(created_at, id)` as a cursor (`positionCursor`). */
const position = (tx: Tx) => tx`(extract(epoch from m.created_at) * 1000000)::bigint::text || '-' || m.id`;

function pageOf(rows: Row[], count: number, scan: number): MessageListPage {
  const found = rows.filter((row) => row.id !== null);
  const items = found.slice(0, count).map(summaryOf);
  if (found.length > count) return { items, cursor: found[count - 1]!.position, searchedTo: null };
  const { scanned, oldest } = rows[0]!;
  // Fewer matches than a page: the end, unless the scan stopped at its limit before the table's end.
  if (scanned < scan || oldest === null || scan <= count + 1) return { items, cursor: null, searchedTo: null };
  return { items, cursor: oldest, searchedTo: new Date(Number(oldest.slice(0, oldest.indexOf("-"))) / 1000) };
}

function summaryOf(row: Row): MessageSummary {
  const { position: _, scanned: __, oldest: ___, lastStatus, lastError, lastBody, attempted, retriedAs, retryState, ...item } = row;
  return {
    ...item,
    last: attempted ? { status: lastStatus, error: lastError, body: lastBody } : null,
    retriedAs: retriedAs === null ? null : { id: retriedAs, state: retryState },
  };
}

/** Messages older than the cursor's position (`(created_at, id)` before it). */
function after(tx: Tx, cursor: string | null): postgres.Fragment {
  return afterPosition(tx, cursor, tx`m.created_at`, tx`m.id`, true);
}
