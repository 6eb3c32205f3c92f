/**
 * Stores a batch of messages in one statement: the rows (bodies as one bytea
 * parameter, bytea-batch.ts; headers as JSON text; the row is its CREATED event), and one NOTIFY on the
 * engine's channel when any of them is due now — a NOTIFY serialises commits,
 * so it is sent once per batch, never per message (README "Architecture: the delivery engine").
 * Queued messages wait off the work list until their queue starts them;
 * times come from the database clock.
 */
import { byteaBatch, byteaSlice } from "../bytea-batch";
import type { Tx } from "../client";
import type { MessageRow } from "../message-columns";

/** The engine's wake-up channel: a NOTIFY on it means "something is due now". */
export const DUE_CHANNEL = "dispatch_due";

/** What a new row needs; the rest is defaulted or derived in SQL. */
export type MessageInsert = Pick<
  MessageRow,
  | "id" | "dialect" | "origin" | "sourceMessageId" | "url" | "topicName" | "endpointName" | "queueName" | "api"
  | "method" | "headers" | "contentType" | "body" | "timeoutMs" | "maxRetries" | "retryDelayExpression"
  | "callback" | "callbackHeaders" | "failureCallback" | "failureCallbackHeaders" | "deduplicationId" | "labels"
  | "redactFields" | "scheduleId" | "callerIp" | "workflowRunPk" | "workflowCallType" | "flowControlKey" | "flowControlValue"
> & {
  /** Unix seconds of the first attempt; wins over `delayMs`. */
  notBefore: number | null;
  delayMs: number;
};

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

/**
 * Inserts `rows` in order (their `seq` follows the array). `delayScale`
 * multiplies the wait before each first attempt; `not_before` keeps what was asked.
 */
export async function insertMessageRows(tx: Tx, rows: MessageInsert[], delayScale: number): Promise<void> {
  const column = <T>(pick: (row: MessageInsert) => T) => rows.map(pick);
  const bodies = byteaBatch(column((r) => r.body));
  await tx`
    with r as (
      select * from unnest(
        ${column((r) => r.id)}::text[], ${column((r) => r.dialect)}::text[], ${column((r) => r.origin)}::text[],
        ${column((r) => r.sourceMessageId)}::text[], ${column((r) => r.url)}::text[],
        ${column((r) => r.topicName)}::text[], ${column((r) => r.endpointName)}::text[],
        ${column((r) => r.queueName)}::text[], ${column((r) => r.api)}::text[], ${column((r) => r.method)}::text[],
        ${column((r) => json(r.headers))}::text[], ${column((r) => r.contentType)}::text[],
        ${bodies.lengths}::int[], ${column((r) => r.timeoutMs)}::int[],
        ${column((r) => r.maxRetries)}::int[], ${column((r) => r.retryDelayExpression)}::text[],
        ${column((r) => r.callback)}::text[], ${column((r) => json(r.callbackHeaders))}::text[],
        ${column((r) => r.failureCallback)}::text[], ${column((r) => json(r.failureCallbackHeaders))}::text[],
        ${column((r) => r.deduplicationId)}::text[], ${column((r) => json(r.labels))}::text[],
        ${column((r) => json(r.redactFields))}::text[], ${column((r) => r.scheduleId)}::text[],
        ${column((r) => r.callerIp)}::text[],
        ${column((r) => r.notBefore)}::bigint[], ${column((r) => r.delayMs)}::bigint[],
        ${column((r) => r.workflowRunPk)}::bigint[], ${column((r) => r.workflowCallType)}::text[],
        ${column((r) => r.flowControlKey)}::text[], ${column((r) => r.flowControlValue)}::text[]
      ) with ordinality as r(id, dialect, origin, source_message_id, url, topic_name, endpoint_name, queue_name, api,
        method, headers, content_type, body_length, timeout_ms, max_retries, retry_delay_expression, callback,
        callback_headers, failure_callback, failure_callback_headers, deduplication_id, labels, redact_fields,
        schedule_id, caller_ip, not_before, delay_ms, workflow_run_pk, workflow_call_type, flow_control_key,
        flow_control_value, n)),
    timed as (
      select r.*, ${byteaSlice(tx, bodies, "r.body_length", "r.n")} as body, t.due,
        greatest(now() + (t.due - now()) * ${delayScale}::float8, now()) as next
      from r, lateral (select coalesce(to_timestamp(r.not_before), now() + r.delay_ms * interval '1 millisecond') as due) t),
    inserted as (
      insert into dispatch.messages (
        id, dialect, origin, source_message_id, url, topic_name, endpoint_name, queue_name, api, method, headers,
        content_type, body, timeout_ms, max_retries, retry_delay_expression, callback, callback_headers,
        failure_callback, failure_callback_headers, deduplication_id, labels, redact_fields, schedule_id,
        caller_ip, not_before, next_delivery_at, due_at, pending_queue, workflow_run_pk, workflow_call_type,
        flow_control_key, flow_control_value)
      select id, dialect, origin, source_message_id, url, topic_name, endpoint_name, queue_name, api, method,
        headers::jsonb, content_type, body, timeout_ms, max_retries, retry_delay_expression, callback,
        callback_headers::jsonb, failure_callback, failure_callback_headers::jsonb, deduplication_id,
        array(select jsonb_array_elements_text(labels::jsonb)),
        case when redact_fields is not null then array(select jsonb_array_elements_text(redact_fields::jsonb)) end,
        schedule_id, caller_ip, due, next,
        case when queue_name is null then next end, queue_name, workflow_run_pk, workflow_call_type,
        flow_control_key, flow_control_value
      from timed order by n
      returning due_at)
    select pg_notify(${DUE_CHANNEL}, '') from (select 1 from inserted where due_at <= now() limit 1) as due`;
}
