/**
 * What happens after an attempt: the message's new state, its events, a retry,
 * the dead letter queue, callbacks and failure callbacks — all in one
 * transaction, so a crash leaves either none or all of it.
 */
import type { Tx } from "../db/client";
import { scheduleDeliveries } from "../worker/jobs";
import { buildCallbackMessage, callbackBody, callbackDue, type CallbackKind } from "./callbacks";
import type { Attempt, Outcome, StoredMessage } from "./delivery";
import { newDlqId } from "./ids";
import { insertMessages, type NewMessage } from "./messages";
import type { PublishLimits } from "./publish-options";
import { startQueuedMessages } from "./queues";

/** Limits and windows that callback messages are made with. */
export interface OutcomeSettings {
  limits: PublishLimits;
  deduplicationWindowMs: number;
}

/**
 * Records `outcome` of `attempt`. The message row is locked and re-read: if a
 * cancel (or another worker) changed it meanwhile, only the attempt's events
 * are kept — the in-flight attempt may land, nothing new starts.
 */
export async function recordOutcome(
  tx: Tx,
  message: StoredMessage,
  attempt: Attempt,
  outcome: Outcome,
  settings: OutcomeSettings,
): Promise<void> {
  const [current] = await tx<{ state: string; retried: number }[]>`
    select state, retried from dispatch.messages where id = ${message.id} for update`;
  await insertAttemptEvents(tx, message.id, attempt, outcome);
  const unchanged = current && ["CREATED", "RETRY"].includes(current.state) && current.retried === message.retried;
  if (!unchanged) return;
  if (outcome.kind === "delivered") await markDelivered(tx, message);
  else if (outcome.kind === "retry") await scheduleRetry(tx, message, outcome.delayMs);
  else await markFailed(tx, message, attempt, outcome.error, settings);
  // A finished queued message frees its slot for the next one in line.
  if (outcome.kind !== "retry" && message.queueName !== null) await startQueuedMessages(tx, message.queueName);
  if (callbackDue(message, outcome.kind !== "retry")) {
    await sendCallback(tx, "callback", message, callbackBody(message, attempt, null), settings);
  }
}

async function insertAttemptEvents(tx: Tx, messageId: string, attempt: Attempt, outcome: Outcome): Promise<void> {
  await tx`insert into dispatch.message_events (message_id, state, at) values (${messageId}, 'ACTIVE', ${attempt.startedAt})`;
  const response = attempt.kind === "response" ? attempt : null;
  if (outcome.kind === "delivered") {
    await tx`insert into dispatch.message_events (message_id, state, response_status) values (${messageId}, 'DELIVERED', ${response?.status ?? null})`;
    return;
  }
  await tx`
    insert into dispatch.message_events (message_id, state, error, response_status, response_headers, response_body)
    values (${messageId}, 'ERROR', ${outcome.error}, ${response?.status ?? null},
            ${response ? tx.json(response.headers) : null}, ${response?.body ?? null})`;
}

async function markDelivered(tx: Tx, message: StoredMessage): Promise<void> {
  await tx`update dispatch.messages set state = 'DELIVERED', completed_at = now() where id = ${message.id}`;
}

async function scheduleRetry(tx: Tx, message: StoredMessage, delayMs: number): Promise<void> {
  await tx`
    with retry as (
      update dispatch.messages
      set state = 'RETRY', retried = retried + 1, next_delivery_at = now() + ${delayMs} * interval '1 millisecond'
      where id = ${message.id}
      returning id, next_delivery_at)
    insert into dispatch.message_events (message_id, state, next_delivery_at)
    select id, 'RETRY', next_delivery_at from retry`;
  await scheduleDeliveries(tx, [message.id]);
}

/** Retries are exhausted (or the destination said not to retry): FAILED, DLQ, failure callback. */
async function markFailed(tx: Tx, message: StoredMessage, attempt: Attempt, error: string, settings: OutcomeSettings) {
  const dlqId = newDlqId();
  const response = attempt.kind === "response" ? attempt : null;
  await tx`update dispatch.messages set state = 'FAILED', completed_at = now() where id = ${message.id}`;
  await tx`insert into dispatch.message_events (message_id, state, error) values (${message.id}, 'FAILED', ${error})`;
  await tx`
    insert into dispatch.dlq (dlq_id, message_id, error, response_status, response_headers, response_body)
    values (${dlqId}, ${message.id}, ${error}, ${response?.status ?? null},
            ${response ? tx.json(response.headers) : null}, ${response?.body ?? null})`;
  await sendCallback(tx, "failure_callback", message, callbackBody(message, attempt, dlqId), settings);
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
): Promise<void> {
  let callback: NewMessage | null;
  try {
    callback = buildCallbackMessage(kind, message, body, settings.limits);
  } catch (error) {
    const text = `${kind.replace("_", " ")} not sent: ${(error as Error).message}`;
    await tx`insert into dispatch.message_events (message_id, state, error) values (${message.id}, 'ERROR', ${text})`;
    return;
  }
  if (callback) await insertMessages(tx, [callback], settings.deduplicationWindowMs);
}
