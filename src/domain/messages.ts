/**
 * Writing messages: the rows, their CREATED events, their deduplication
 * windows and their delivery jobs, all in the caller's transaction
 * (ARCHITECTURE.md §4). Publishing, fan-out, callbacks and DLQ retries all
 * come through `insertMessages`.
 */
import type { Tx } from "../db/client";
import { addHandedJobs, ENGINE_HORIZON_MS } from "./delivery/schedule";
import { claimDeduplicationKeys } from "./deduplication";
import { lockQueues, startQueuedMessages } from "./queues";
import { bindWorkflowMessages } from "./workflows/binding";
import type { WorkflowBinding } from "./workflows/protocol";
import type { StoredMessage } from "./delivery/attempt";
import type { Dialect } from "./dialect";

/** Why a message exists. */
export type MessageOrigin = "publish" | "callback" | "failure_callback" | "workflow";

/** A message about to be stored. */
export interface NewMessage {
  id: string;
  dialect: Dialect;
  origin: MessageOrigin;
  sourceMessageId: string | null;
  url: string;
  topicName: string | null;
  endpointName: string | null;
  queueName: string | null;
  api: string | null;
  method: string;
  headers: Record<string, string>;
  contentType: string | null;
  body: Buffer;
  timeoutMs: number | null;
  maxRetries: number;
  retryDelayExpression: string | null;
  callback: string | null;
  callbackHeaders: Record<string, string> | null;
  failureCallback: string | null;
  failureCallbackHeaders: Record<string, string> | null;
  deduplicationId: string | null;
  /** Key of the deduplication window this message claims, if any. */
  deduplicationKey: string | null;
  labels: string[];
  scheduleId: string | null;
  callerIp: string | null;
  /** Unix seconds; wins over `delayMs`. */
  notBefore: number | null;
  delayMs: number;
  flowControl: { key: string; value: string } | null;
  /** The run the message belongs to, as published; bound to a run when stored. */
  workflow: WorkflowBinding | null;
  /** Set by `bindWorkflowMessages`: the run's primary key. */
  workflowRunPk?: number;
}

/** The publish result of one message (interface.md "Publish result"). */
export interface PublishResult {
  messageId: string;
  url: string;
  deduplicated: boolean;
}

/**
 * Stores `messages` and schedules their first delivery. A message whose
 * deduplication key is held by a live window (or by an earlier message of the
 * same batch) is not stored; its result carries the holder's id.
 */
export async function insertMessages(tx: Tx, messages: NewMessage[], deduplicationWindowMs: number): Promise<PublishResult[]> {
  const deduplicated = await deduplicate(tx, messages, deduplicationWindowMs);
  const duplicateOf = new Map([...deduplicated.duplicateOf, ...(await bindWorkflowMessages(tx, deduplicated.fresh))]);
  const fresh = deduplicated.fresh.filter((message) => !duplicateOf.has(message.id));
  if (fresh.length > 0) {
    const queueNames = [...new Set(fresh.flatMap((message) => (message.queueName === null ? [] : [message.queueName])))];
    // Locking the queues first makes publish order (`seq`) the start order.
    await lockQueues(tx, queueNames);
    await insertRows(tx, fresh);
    for (const name of queueNames) await startQueuedMessages(tx, name);
  }
  return messages.map((message) => {
    const holder = duplicateOf.get(message.id);
    return { messageId: holder ?? message.id, url: message.url, deduplicated: holder !== undefined };
  });
}

async function deduplicate(tx: Tx, messages: NewMessage[], windowMs: number) {
  const duplicateOf = new Map<string, string>();
  const firstByKey = new Map<string, string>();
  for (const message of messages) {
    if (message.deduplicationKey === null) continue;
    const first = firstByKey.get(message.deduplicationKey);
    if (first !== undefined) duplicateOf.set(message.id, first);
    else firstByKey.set(message.deduplicationKey, message.id);
  }
  const claims = [...firstByKey].map(([key, messageId]) => ({ key, messageId }));
  const held = await claimDeduplicationKeys(tx, claims, windowMs);
  for (const [key, holder] of held) {
    const claimant = firstByKey.get(key)!;
    duplicateOf.set(claimant, holder);
    for (const [id, first] of duplicateOf) if (first === claimant) duplicateOf.set(id, holder);
  }
  return { fresh: messages.filter((message) => !duplicateOf.has(message.id)), duplicateOf };
}

/**
 * Stores the batch in one statement: the rows, their CREATED events and the
 * engine jobs of those due within the horizon (queued messages get theirs
 * when their queue starts them). Times come from the database clock.
 */
async function insertRows(tx: Tx, messages: NewMessage[]): Promise<void> {
  const rows = messages.map((m) => ({
    ...m,
    workflow: undefined,
    body: m.body.toString("base64"),
    workflowCallType: m.workflowRunPk === undefined ? null : m.workflow!.callType,
  }));
  await tx`
    with handed as (
      insert into dispatch.messages (
        id, dialect, origin, source_message_id, url, topic_name, endpoint_name, queue_name, api, method,
        headers, content_type, body, timeout_ms, max_retries, retry_delay_expression, callback,
        callback_headers, failure_callback, failure_callback_headers, deduplication_id, labels,
        schedule_id, caller_ip, not_before, next_delivery_at, job_scheduled, workflow_run_pk, workflow_call_type)
      select
        r.id, r.dialect, r.origin, r."sourceMessageId", r.url, r."topicName", r."endpointName", r."queueName",
        r.api, r.method, r.headers, r."contentType", decode(r.body, 'base64'), r."timeoutMs", r."maxRetries",
        r."retryDelayExpression", r.callback, r."callbackHeaders", r."failureCallback", r."failureCallbackHeaders",
        r."deduplicationId", r.labels, r."scheduleId", r."callerIp", t.due, greatest(t.due, now()),
        r."queueName" is null and t.due < now() + ${ENGINE_HORIZON_MS} * interval '1 millisecond',
        r."workflowRunPk", r."workflowCallType"
      from jsonb_to_recordset(${tx.json(rows as never)}) as r(
        id text, dialect text, origin text, "sourceMessageId" text, url text, "topicName" text,
        "endpointName" text, "queueName" text, api text, method text, headers jsonb, "contentType" text,
        body text, "timeoutMs" int, "maxRetries" int, "retryDelayExpression" text, callback text,
        "callbackHeaders" jsonb, "failureCallback" text, "failureCallbackHeaders" jsonb,
        "deduplicationId" text, labels text[], "scheduleId" text, "callerIp" text, "notBefore" bigint, "delayMs" bigint,
        "workflowRunPk" bigint, "workflowCallType" text),
      lateral (select coalesce(to_timestamp(r."notBefore"), now() + r."delayMs" * interval '1 millisecond') as due) t
      returning id, next_delivery_at, job_scheduled),
    created as (insert into dispatch.message_events (message_id, state) select id, 'CREATED' from handed)
    ${addHandedJobs(tx)}`;
}

/** Reads a message as the worker and the API see it; null when unknown. */
export async function findMessage(tx: Tx, id: string): Promise<StoredMessage | null> {
  const [message] = await findMessages(tx, [id]);
  return message ?? null;
}

/** Reads the messages with `ids` (unknown ids are left out). */
export function findMessages(tx: Tx, ids: string[]): Promise<StoredMessage[]> {
  return tx<StoredMessage[]>`
    select id, dialect, state, origin, url, topic_name as "topicName", endpoint_name as "endpointName",
      queue_name as "queueName", method, headers, content_type as "contentType", body,
      timeout_ms as "timeoutMs", max_retries as "maxRetries", retried,
      retry_delay_expression as "retryDelayExpression", callback, callback_headers as "callbackHeaders",
      failure_callback as "failureCallback", failure_callback_headers as "failureCallbackHeaders",
      labels, schedule_id as "scheduleId", caller_ip as "callerIp", not_before as "notBefore",
      next_delivery_at as "nextDeliveryAt", created_at as "createdAt", deduplication_id as "deduplicationId", api,
      workflow_run_pk as "workflowRunPk", workflow_call_type as "workflowCallType"
    from dispatch.messages where id = any(${ids}::text[])`;
}
