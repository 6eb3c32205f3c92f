/**
 * What is failing now: the destinations whose attempts got the most errors
 * in the last hour, each with its latest error. Bounded: the newest
 * `RECENT_ERRORS` error attempts of the hour are grouped (read backward
 * through `attempts_pkey` from the hour's start, activity.ts), each joined
 * to its message by `messages_pkey`; the latest error of each destination
 * is then read by its attempt id.
 */
import type { Tx } from "../../db/client";
import { ANSWER_BYTES, type LastAnswer } from "../messages/attempts";
import { inLastHour } from "./activity";

/** At most this many of the hour's error attempts are grouped. */
export const RECENT_ERRORS = 10_000;

/** A destination with failing attempts. */
export interface FailingDestination {
  url: string;
  /** The URL group and queue of the message that failed last, when it had them. */
  topicName: string | null;
  queueName: string | null;
  /** Error attempts in the last hour, and the messages they were of. */
  failures: number;
  messages: number;
  lastAt: Date;
  last: LastAnswer;
}

/** The `count` destinations with the most error attempts in the last hour, most first. */
export async function failingNow(tx: Tx, count: number): Promise<FailingDestination[]> {
  const rows = await tx<(Omit<FailingDestination, "last"> & LastAnswer)[]>`
    with errors as (
      select a.id, a.message_id from dispatch.attempts a
      where ${inLastHour(tx)} and a.result = 'ERROR'
      order by a.id desc limit ${RECENT_ERRORS}
    ), destinations as (
      select m.url, count(*)::int as failures, count(distinct e.message_id)::int as messages, max(e.id) as last_id
      from errors e join dispatch.messages m on m.id = e.message_id
      group by m.url
      order by failures desc, last_id desc
      limit ${count}
    )
    select d.url, d.failures, d.messages, m.topic_name as "topicName", m.queue_name as "queueName", a.recorded_at as "lastAt",
      a.response_status as status, a.error, substring(a.response_body from 1 for ${ANSWER_BYTES}) as body
    from destinations d join dispatch.attempts a on a.id = d.last_id join dispatch.messages m on m.id = a.message_id
    order by d.failures desc, d.last_id desc`;
  return rows.map(({ status, error, body, ...row }) => ({ ...row, last: { status, error, body } }));
}
