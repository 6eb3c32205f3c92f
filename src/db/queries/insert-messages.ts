/**
 * Stores a batch of messages in one statement: the rows (bodies as one bytea
 * parameter, bytea-batch.ts; headers as JSON text; the row is its CREATED event), and one NOTIFY on the
 * engine's channel when any of them is due now — a NOTIFY serialises commits,
 * so it is sent once per batch, never per message (README "Architecture: the delivery engine").
 * Queued messages wait off the work list until their queue starts them;
 * times come from the database clock.
 *
 * The columns are written once, in `COLUMNS`: each names the row field it is
 * made of, the array type it travels as and, where the stored value is made
 * in SQL, how. The statement is built from that table once, when the module
 * loads; a call only gathers the parameters.
 */
import { byteaBatch, byteaSliceSql } from "../bytea-batch";
import type { Tx } from "../client";
import type { MessageRow } from "../message-columns";
import { DUE_CHANNEL } from "./work-list";


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

/** A column of the insert: `name` in the unnested rows, sent as an array of `type`, stored as `stored` (default: as sent). */
interface InsertColumn {
  name: string;
  type: "text" | "int" | "bigint";
  value: (row: MessageInsert) => unknown;
  stored?: string;
  /** Not a column of the table: used to compute others (`due_at` and the like). */
  input?: true;
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
const textArray = (column: string) => `array(select jsonb_array_elements_text(${column}::jsonb))`;

const COLUMNS: InsertColumn[] = [
  { name: "id", type: "text", value: (r) => r.id },
  { name: "dialect", type: "text", value: (r) => r.dialect },
  { name: "origin", type: "text", value: (r) => r.origin },
  { name: "source_message_id", type: "text", value: (r) => r.sourceMessageId },
  { name: "url", type: "text", value: (r) => r.url },
  { name: "topic_name", type: "text", value: (r) => r.topicName },
  { name: "endpoint_name", type: "text", value: (r) => r.endpointName },
  { name: "queue_name", type: "text", value: (r) => r.queueName },
  { name: "api", type: "text", value: (r) => r.api },
  { name: "method", type: "text", value: (r) => r.method },
  { name: "headers", type: "text", value: (r) => json(r.headers), stored: "headers::jsonb" },
  { name: "content_type", type: "text", value: (r) => r.contentType },
  { name: "timeout_ms", type: "int", value: (r) => r.timeoutMs },
  { name: "max_retries", type: "int", value: (r) => r.maxRetries },
  { name: "retry_delay_expression", type: "text", value: (r) => r.retryDelayExpression },
  { name: "callback", type: "text", value: (r) => r.callback },
  { name: "callback_headers", type: "text", value: (r) => json(r.callbackHeaders), stored: "callback_headers::jsonb" },
  { name: "failure_callback", type: "text", value: (r) => r.failureCallback },
  { name: "failure_callback_headers", type: "text", value: (r) => json(r.failureCallbackHeaders), stored: "failure_callback_headers::jsonb" },
  { name: "deduplication_id", type: "text", value: (r) => r.deduplicationId },
  { name: "labels", type: "text", value: (r) => json(r.labels), stored: textArray("labels") },
  {
    name: "redact_fields",
    type: "text",
    value: (r) => json(r.redactFields),
    stored: `case when redact_fields is not null then ${textArray("redact_fields")} end`,
  },
  { name: "schedule_id", type: "text", value: (r) => r.scheduleId },
  { name: "caller_ip", type: "text", value: (r) => r.callerIp },
  { name: "workflow_run_pk", type: "bigint", value: (r) => r.workflowRunPk },
  { name: "workflow_call_type", type: "text", value: (r) => r.workflowCallType },
  { name: "flow_control_key", type: "text", value: (r) => r.flowControlKey },
  { name: "flow_control_value", type: "text", value: (r) => r.flowControlValue },
  { name: "not_before_seconds", type: "bigint", value: (r) => r.notBefore, input: true },
  { name: "delay_ms", type: "bigint", value: (r) => r.delayMs, input: true },
];

/**
 * The columns computed in SQL from those above, the body (cut from the
 * batch's bytes) and the first attempt's time: `due` as asked, `next` scaled
 * (tests scale waits down); a queued message waits off the work list.
 */
const COMPUTED: Record<string, string> = {
  body: "body",
  not_before: "due",
  next_delivery_at: "next",
  due_at: "case when queue_name is null then next end",
  pending_queue: "queue_name",
};

/** Parameters after the columns' arrays: the bodies, their lengths, the delay scale, the channel. */
const parameter = (k: number) => `$${COLUMNS.length + k}`;
const [BODIES, LENGTHS, DELAY_SCALE, CHANNEL] = [parameter(1), parameter(2), parameter(3), parameter(4)];

const STORED = COLUMNS.filter((column) => !column.input);

const INSERT = `
  with r as (
    select * from unnest(${COLUMNS.map((column, i) => `$${i + 1}::${column.type}[]`).join(", ")}, ${LENGTHS}::int[])
      with ordinality as r(${COLUMNS.map((column) => column.name).join(", ")}, body_length, n)),
  timed as (
    select r.*, ${byteaSliceSql(BODIES, "r.body_length", "r.n")} as body, t.due, greatest(now() + (t.due - now()) * ${DELAY_SCALE}::float8, now()) as next
    from r, lateral (
      select coalesce(to_timestamp(r.not_before_seconds), now() + r.delay_ms * interval '1 millisecond') as due) t),
  inserted as (
    insert into dispatch.messages (${[...STORED.map((column) => column.name), ...Object.keys(COMPUTED)].join(", ")})
    select ${[...STORED.map((column) => column.stored ?? column.name), ...Object.values(COMPUTED)].join(", ")}
    from timed order by n
    returning due_at)
  select pg_notify(${CHANNEL}, '') from (select 1 from inserted where due_at <= now() limit 1) as due`;

/**
 * Inserts `rows` in order (their `seq` follows the array). `delayScale`
 * multiplies the wait before each first attempt; `not_before` keeps what was asked.
 */
export async function insertMessageRows(tx: Tx, rows: MessageInsert[], delayScale: number): Promise<void> {
  const bodies = byteaBatch(rows.map((row) => row.body));
  const columns = COLUMNS.map((column) => rows.map(column.value));
  await tx.unsafe(INSERT, [...columns, bodies.bytes, bodies.lengths, delayScale, DUE_CHANNEL] as never[]);
}
