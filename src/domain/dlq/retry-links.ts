/**
 * The thread between a failed message and its DLQ retry. A retry removes the
 * DLQ entry (as the API has it), so the link is kept on the failed message:
 * `retried_as` names the retry, `retried_at` is the retry's `created_at`.
 * One partial index (`messages_retried_at_idx`, on `(project, retried_at)`
 * where `retried_as` is set) serves every question: the retries newest first, the
 * original of a retry (its `created_at` and id), and how many failed
 * messages were retried. Only failed messages have DLQ entries, so every
 * message with `retried_as` failed; what is still failing is its retry. The
 * link is written by db/queries/link-retries.ts, and both ends are always
 * of one project (a DLQ retry publishes in the entry's project).
 */
import type { Tx } from "../../db/client";
import type { MessageState } from "../../db/vocabulary";

/** A message at the other end of a link, and where it stands (null once retention removed it). */
export interface LinkedMessage {
  id: string;
  state: MessageState | null;
  /** Its DLQ entry, when it failed too. */
  dlqId: string | null;
}

/** A message's links: the retry its DLQ entry became, and the failed message it is the retry of. */
export interface RetryLinks {
  retriedAs: LinkedMessage | null;
  retryOf: LinkedMessage | null;
}

/** The links of `message` (`messages_pkey` one way, `messages_retried_at_idx` the other). */
export async function retryLinks(
  tx: Tx,
  message: { id: string; project: string; createdAt: Date; retriedAs: string | null },
): Promise<RetryLinks> {
  const [retriedAs] = message.retriedAs === null ? [] : await linked(tx, message.project, tx`m.id = ${message.retriedAs}`);
  // A Date holds milliseconds, the column microseconds: the millisecond `createdAt` lies in.
  const at = message.createdAt.getTime();
  const [retryOf] = await linked(
    tx,
    message.project,
    tx`m.retried_at >= ${new Date(at)} and m.retried_at < ${new Date(at + 1)} and m.retried_as = ${message.id}`,
  );
  return {
    retriedAs: message.retriedAs === null ? null : (retriedAs ?? { id: message.retriedAs, state: null, dlqId: null }),
    retryOf: retryOf ?? null,
  };
}

function linked(tx: Tx, project: string, which: ReturnType<Tx>) {
  return tx<LinkedMessage[]>`
    select m.id, m.state, d.dlq_id as "dlqId"
    from dispatch.messages m left join dispatch.dlq d on d.project = m.project and d.message_id = m.id
    where m.project = ${project} and ${which}`;
}

/** A DLQ retry: the failed message, when it was retried, and the retry as it stands. */
export interface DlqRetry {
  original: string;
  url: string;
  retriedAt: Date;
  retry: LinkedMessage;
}

/** The latest `count` DLQ retries of `project`, newest first. */
export async function recentRetries(tx: Tx, project: string, count: number): Promise<DlqRetry[]> {
  const rows = await tx<(Omit<DlqRetry, "retry"> & { retryId: string; state: MessageState | null; dlqId: string | null })[]>`
    select o.id as original, o.url, o.retried_at as "retriedAt", o.retried_as as "retryId", r.state, d.dlq_id as "dlqId"
    from dispatch.messages o
      left join dispatch.messages r on r.id = o.retried_as and r.project = o.project
      left join dispatch.dlq d on d.project = o.project and d.message_id = o.retried_as
    where o.project = ${project} and o.retried_as is not null
    order by o.retried_at desc, o.id desc
    limit ${count}`;
  return rows.map(({ retryId, state, dlqId, ...retry }) => ({ ...retry, retry: { id: retryId, state, dlqId } }));
}
