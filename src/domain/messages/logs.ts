/**
 * The logs (docs/hosted-api.md §9): every state change of every message, from the
 * view `dispatch.message_events` (messages and the attempt log spelt out as
 * events), with the message it belongs to. Pages are cut by event id, so a
 * cursor is stable however many events arrive meanwhile (`list-events.ts`).
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import { listEvents } from "../../db/queries/list-events";
import { EVENT_STATES } from "../../db/vocabulary";
import { badRequest } from "../errors";
import { integerCursor, pageOf } from "../paging";
import { matchMessages, type MessageFilter, type Order, type TimeRange, withinRange } from "./filter";
import type { StoredMessage } from "./message";
import { findMessages } from "./message";

/** Filter-only names: the docs' spelling of CANCELED, and IN_PROGRESS for an unfinished delivery. */
const STATE_ALIASES: Record<string, string[]> = {
  CANCELLED: ["CANCELED"],
  IN_PROGRESS: ["ACTIVE", "RETRY", "ERROR"],
};

/** The event states `names` stand for (aliases expanded), or a 400 naming an unknown one. */
export function logStates(names: string[]): string[] {
  return [
    ...new Set(
      names.flatMap((name) => {
        const upper = name.toUpperCase();
        if ((EVENT_STATES as readonly string[]).includes(upper)) return [upper];
        const states = STATE_ALIASES[upper];
        if (!states) throw badRequest(`unknown state "${name}"; use one of ${EVENT_STATES.join(", ")} or IN_PROGRESS`);
        return states;
      }),
    ),
  ];
}

/** Which events to list. With `messageIds`, the other filters are ignored (the SDKs rely on it). */
export interface LogQuery {
  /** Whose messages: a project's log shows its own only. */
  project: string;
  messageIds: string[] | null;
  states: string[] | null;
  filter: MessageFilter;
  range: TimeRange;
  /** Id of the event to continue after, from an earlier page. */
  cursor: string | null;
  count: number;
  order: Order;
}

/** One event with the message it belongs to. */
export interface LogEvent {
  id: string;
  at: Date;
  state: string;
  error: string | null;
  responseStatus: number | null;
  responseHeaders: Record<string, string[]> | null;
  responseBody: Buffer | null;
  /** When the next attempt is due: on RETRY events, and on CREATED (the first attempt). */
  nextDeliveryAt: Date | null;
  message: StoredMessage;
}

const MAX_EVENT_ID = 2n ** 63n - 1n;

/** A page of events and, when more follow, the cursor of the next one. */
export async function listLogs(tx: Tx, query: LogQuery): Promise<{ events: LogEvent[]; cursor: string | null }> {
  const rows = await listEvents(tx, {
    where: selectEvents(tx, query),
    after: integerCursor(query.cursor, MAX_EVENT_ID),
    latestFirst: query.order === "latestFirst",
    limit: query.count + 1,
  });
  const { kept: page, cursor } = pageOf(rows, query.count, (last) => eventId(last.seq, last.n));
  // Each message once, however many of its events the page holds.
  const messages = new Map((await findMessages(tx, [...new Set(page.map((row) => row.messageId))])).map((m) => [m.id, m]));
  const events = page.map(({ messageId, seq, n, ...event }) => {
    const message = messages.get(messageId)!;
    const nextDeliveryAt = event.nextDeliveryAt ?? (event.state === "CREATED" ? message.notBefore : null);
    return { ...event, id: eventId(seq, n), nextDeliveryAt, message };
  });
  return { events, cursor };
}

/** The public id of the event at `(seq, n)` (see `dispatch.message_events`). */
const eventId = (seq: string, n: number) => String(BigInt(seq) * 8n + BigInt(n));

function selectEvents(tx: Tx, query: LogQuery): postgres.Fragment {
  const own = tx`m.project = ${query.project}`;
  if (query.messageIds !== null) return tx`${own} and m.id = any(${query.messageIds}::text[])`;
  const states = query.states === null ? tx`true` : tx`e.state = any(${query.states}::text[])`;
  return tx`${own} and ${states} and ${matchMessages(tx, query.filter)} and ${withinRange(tx, tx`e.at`, query.range)}`;
}

