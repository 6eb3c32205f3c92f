/**
 * What is failing now: the destinations whose attempts got the most errors
 * in the last hour, each with its latest error, leaving out those that got a
 * delivery since their latest error (the destination works again: a retry
 * went through, a DLQ retry was delivered, a new message was). Bounded, by
 * indexes only (no URL is indexed):
 * - the newest `RECENT_ERRORS` error attempts of the hour are grouped (read
 *   backward through `attempts_pkey` from the hour's start, activity.ts),
 *   each joined to its message by `messages_pkey`;
 * - the deliveries that clear a destination are the newest
 *   `RECENT_DELIVERIES` of the hour (the same way), and, however many
 *   others came since, those of the failed messages themselves and of the
 *   DLQ retries they became (`retried_as`), found by `attempts_message_id_idx`;
 * - the latest error of each destination is then read by its attempt id.
 */
import type { Tx } from "../../db/client";
import { ANSWER_BYTES, type LastAnswer } from "../messages/attempts";
import { inLastHour } from "./activity";

/** At most this many of the hour's error attempts are grouped. */
export const RECENT_ERRORS = 10_000;
/** At most this many of the hour's deliveries are looked at, besides those of the failed messages and their DLQ retries. */
export const RECENT_DELIVERIES = 10_000;

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

/** The `count` destinations with the most error attempts in the last hour and no delivery since the latest, most first. */
export async function failingNow(tx: Tx, project: string, count: number): Promise<FailingDestination[]> {
  const rows = await tx<(Omit<FailingDestination, "last"> & LastAnswer)[]>`
    with errors as (
      select a.id, a.message_id, m.url, m.retried_as from (
          select a.id, a.message_id from dispatch.attempts a
          where ${inLastHour(tx, project)} and a.project = ${project} and a.result = 'ERROR'
          order by a.id desc limit ${RECENT_ERRORS}) a
        join dispatch.messages m on m.project = ${project} and m.id = a.message_id
      where m.project = ${project}
    ), failing as (
      select url, count(*)::int as failures, count(distinct message_id)::int as messages, max(id) as last_id
      from errors group by url
    ), deliveries as (
      select m.url, a.id from (
          select a.id, a.message_id from dispatch.attempts a
          where ${inLastHour(tx, project)} and a.project = ${project} and a.result = 'DELIVERED'
          order by a.id desc limit ${RECENT_DELIVERIES}) a
        join dispatch.messages m on m.project = ${project} and m.id = a.message_id
      where m.project = ${project}
      union all
      select m.url, a.id from (select message_id from errors union select retried_as from errors where retried_as is not null) related
        join dispatch.messages m on m.project = ${project} and m.id = related.message_id
        join dispatch.attempts a on a.project = ${project} and a.message_id = m.id and a.result = 'DELIVERED'
    ), destinations as (
      select f.* from failing f
      where not exists (select 1 from deliveries d where d.url = f.url and d.id > f.last_id)
      order by f.failures desc, f.last_id desc
      limit ${count}
    )
    select d.url, d.failures, d.messages, m.topic_name as "topicName", m.queue_name as "queueName", a.recorded_at as "lastAt",
      a.response_status as status, a.error, substring(a.response_body from 1 for ${ANSWER_BYTES}) as body
    from destinations d join dispatch.attempts a on a.project = ${project} and a.id = d.last_id
      join dispatch.messages m on m.project = ${project} and m.id = a.message_id
    order by d.failures desc, d.last_id desc`;
  return rows.map(({ status, error, body, ...row }) => ({ ...row, last: { status, error, body } }));
}
