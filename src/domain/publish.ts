/**
 * Publishing: turning validated options and a body into stored messages.
 * Used for publishes to a URL, and for the callback messages the worker makes.
 */
import type { Tx } from "../db/client";
import { deduplicationKey } from "./deduplication";
import { newMessageId } from "./ids";
import { insertMessages, type MessageOrigin, type NewMessage, type PublishResult } from "./messages";
import type { PublishOptions } from "./publish-options";

/** Where a message goes. */
export interface Destination {
  url: string;
  topicName?: string | null;
  endpointName?: string | null;
  queueName?: string | null;
  api?: string | null;
}

/** Who or what caused the message. */
export interface Provenance {
  origin: MessageOrigin;
  sourceMessageId: string | null;
  callerIp: string | null;
  scheduleId?: string | null;
}

/** A message ready for `insertMessages`, with a fresh id and its deduplication key. */
export function buildMessage(
  options: PublishOptions,
  destination: Destination,
  body: Buffer,
  provenance: Provenance,
): NewMessage {
  const key = deduplicationKey(
    { url: destination.url, method: options.method, contentType: options.contentType, headers: options.forwardHeaders, body },
    options.deduplicationId,
    options.contentBasedDeduplication,
  );
  return {
    id: newMessageId(),
    dialect: options.dialect,
    origin: provenance.origin,
    sourceMessageId: provenance.sourceMessageId,
    url: destination.url,
    topicName: destination.topicName ?? null,
    endpointName: destination.endpointName ?? null,
    queueName: destination.queueName ?? null,
    api: destination.api ?? null,
    method: options.method,
    headers: options.forwardHeaders,
    contentType: options.contentType,
    body,
    timeoutMs: options.timeoutMs,
    maxRetries: options.retries,
    retryDelayExpression: options.retryDelayExpression,
    callback: options.callback?.url ?? null,
    callbackHeaders: options.callback?.headers ?? null,
    failureCallback: options.failureCallback?.url ?? null,
    failureCallbackHeaders: options.failureCallback?.headers ?? null,
    deduplicationId: options.deduplicationId,
    deduplicationKey: key,
    labels: options.labels,
    scheduleId: provenance.scheduleId ?? null,
    callerIp: provenance.callerIp,
    notBefore: options.notBefore,
    delayMs: options.delayMs,
  };
}

/** Stores one message and schedules its delivery, in `tx`. */
export async function publishMessage(tx: Tx, message: NewMessage, deduplicationWindowMs: number): Promise<PublishResult> {
  const [result] = await insertMessages(tx, [message], deduplicationWindowMs);
  return result!;
}
