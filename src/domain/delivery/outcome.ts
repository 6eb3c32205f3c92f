/**
 * What happens after an attempt: the message's new state, its events, a retry,
 * the dead letter queue, callbacks and failure callbacks — all in one
 * transaction, so a crash leaves either none or all of it.
 */
import type { Tx } from "../../db/client";
import { buildCallbackMessage, callbackBody, callbackDue, type CallbackKind } from "../callbacks";
import type { Attempt, Outcome, StoredMessage } from "./attempt";
import { newDlqId } from "../ids";
import { insertMessages, type NewMessage } from "../messages";
import type { PublishLimits } from "../publish-options";
import { startQueuedMessages } from "../queues";
import { failRun, failsRun, recordFailureFunction, workflowCallbackFields } from "../workflows/lifecycle";

/** Limits and windows that callback messages are made with. */
export interface OutcomeSettings {
  limits: PublishLimits;
  deduplicationWindowMs: number;
}

/** One finished attempt and what it leads to. */
export interface AttemptRecord {
  message: StoredMessage;
  attempt: Attempt;
  outcome: Outcome;
}

/**
 * Whether an outcome takes the one-statement path (`record-delivered.ts`):
 * delivered, not queued, no callback and not a failure function. Everything
 * else is recorded by `recordOutcomes`.
 */
export function isPlainDelivery({ message, outcome }: AttemptRecord): boolean {
  return (
    outcome.kind === "delivered" &&
    message.queueName === null &&
    message.workflowCallType !== "failureCall" &&
    !callbackDue(message, true)
  );
}

/**
 * Records finished attempts in the caller's transaction (many at once: the
 * worker batches them). The message rows are locked and re-read: one that a
 * cancel (or a redelivery after a sweep) changed meanwhile keeps only its
 * attempt's events — the in-flight attempt may land, nothing new starts.
 */
export async function recordOutcomes(tx: Tx, records: AttemptRecord[], settings: OutcomeSettings): Promise<void> {
  const ids = [...new Set(records.map((record) => record.message.id))].sort();
  const rows = await tx<{ id: string; state: string; claimId: number | null }[]>`
    select id, state, claim_id as "claimId" from dispatch.messages where id = any(${ids}::text[]) order by id for update`;
  const current = new Map(rows.map((row) => [row.id, row]));
  await insertAttemptEvents(tx, records);
  const claimed = new Set<string>();
  for (const record of records) {
    const row = current.get(record.message.id);
    const fresh = row && (row.state === "CREATED" || row.state === "RETRY") && row.claimId === record.message.claimId;
    if (!fresh || claimed.has(record.message.id)) continue;
    claimed.add(record.message.id);
    await finish(tx, record, settings);
  }
}

async function finish(tx: Tx, { message, attempt, outcome }: AttemptRecord, settings: OutcomeSettings): Promise<void> {
  const final = outcome.kind !== "retry";
  const extra = await workflowCallbackFields(tx, message, final);
  if (outcome.kind === "delivered") await markDelivered(tx, message.id);
  else if (outcome.kind === "retry") await scheduleRetry(tx, message, outcome.delayMs);
  else await markFailed(tx, message, attempt, outcome.error, settings, extra);
  await recordFailureFunction(tx, message, attempt, outcome);
  // A finished queued message frees its slot for the next one in line.
  if (final && message.queueName !== null) await startQueuedMessages(tx, message.queueName);
  if (callbackDue(message, final)) {
    await sendCallback(tx, "callback", message, { ...callbackBody(message, attempt, null), ...extra }, settings);
  }
}

/** ACTIVE (at the attempt's start) then DELIVERED or ERROR, for every record, in one statement. */
async function insertAttemptEvents(tx: Tx, records: AttemptRecord[]): Promise<void> {
  const events = records.flatMap(({ message, attempt, outcome }) => {
    const response = attempt.kind === "response" ? attempt : null;
    const active = { id: message.id, state: "ACTIVE", at: attempt.startedAt.toISOString(), error: null, status: null, headers: null, body: null };
    const delivered = outcome.kind === "delivered";
    const result = {
      id: message.id,
      state: delivered ? "DELIVERED" : "ERROR",
      at: null,
      error: delivered ? null : outcome.error,
      status: response?.status ?? null,
      headers: !delivered && response ? JSON.stringify(response.headers) : null,
      body: !delivered && response ? response.body : null,
    };
    return [active, result];
  });
  const column = <T>(pick: (event: (typeof events)[number]) => T) => events.map(pick);
  await tx`
    insert into dispatch.message_events (message_id, state, at, error, response_status, response_headers, response_body)
    select e.id, e.state, coalesce(e.at, now()), e.error, e.status, e.headers::jsonb, e.body
    from unnest(${column((e) => e.id)}::text[], ${column((e) => e.state)}::text[], ${column((e) => e.at)}::timestamptz[],
      ${column((e) => e.error)}::text[], ${column((e) => e.status)}::int[], ${column((e) => e.headers)}::text[],
      ${tx.array(column((e) => e.body), 17)}::bytea[]) with ordinality as e(id, state, at, error, status, headers, body, n)
    order by e.n`;
}

async function markDelivered(tx: Tx, id: string): Promise<void> {
  await tx`update dispatch.messages set state = 'DELIVERED', completed_at = now(), pending_queue = null where id = ${id}`;
}

/** The next attempt goes back on the work list (a queued message keeps its slot). */
async function scheduleRetry(tx: Tx, message: StoredMessage, delayMs: number): Promise<void> {
  await tx`
    with retry as (
      update dispatch.messages
      set state = 'RETRY', retried = retried + 1, next_delivery_at = now() + ${delayMs} * interval '1 millisecond',
        due_at = now() + ${delayMs} * interval '1 millisecond'
      where id = ${message.id}
      returning id, next_delivery_at)
    insert into dispatch.message_events (message_id, state, next_delivery_at)
    select id, 'RETRY', next_delivery_at from retry`;
}

/**
 * Retries are exhausted (or the destination said not to retry): FAILED, DLQ,
 * failure callback — and for a workflow step, the run fails. A workflow's
 * third-party call is not dead-lettered: its final callback carries the error.
 */
async function markFailed(
  tx: Tx,
  message: StoredMessage,
  attempt: Attempt,
  error: string,
  settings: OutcomeSettings,
  extra: Record<string, unknown>,
) {
  const response = attempt.kind === "response" ? attempt : null;
  await tx`update dispatch.messages set state = 'FAILED', completed_at = now(), pending_queue = null where id = ${message.id}`;
  await tx`insert into dispatch.message_events (message_id, state, error) values (${message.id}, 'FAILED', ${error})`;
  if (message.workflowCallType === "toCallback") return;
  const dlqId = newDlqId();
  await tx`
    insert into dispatch.dlq (dlq_id, message_id, error, response_status, response_headers, response_body)
    values (${dlqId}, ${message.id}, ${error}, ${response?.status ?? null},
            ${response ? tx.json(response.headers) : null}, ${response?.body ?? null})`;
  const body = { ...callbackBody(message, attempt, dlqId), ...extra };
  const failureCallbackId = await sendCallback(tx, "failure_callback", message, body, settings);
  if (failsRun(message)) await failRun(tx, message, attempt, { dlqId, failureCallbackId }, settings);
}

/**
 * Publishes the callback message of `kind`, if the message has one. Its
 * headers were validated at publish; should they no longer pass (limits
 * lowered since), the problem is logged on the source message instead.
 */
async function sendCallback(
  tx: Tx,
  kind: CallbackKind,
  message: StoredMessage,
  body: Record<string, unknown>,
  settings: OutcomeSettings,
): Promise<string | null> {
  let callback: NewMessage | null;
  try {
    callback = buildCallbackMessage(kind, message, body, settings.limits);
  } catch (error) {
    const text = `${kind.replace("_", " ")} not sent: ${(error as Error).message}`;
    await tx`insert into dispatch.message_events (message_id, state, error) values (${message.id}, 'ERROR', ${text})`;
    return null;
  }
  if (!callback) return null;
  const [published] = await insertMessages(tx, [callback], settings.deduplicationWindowMs);
  return published!.messageId;
}
