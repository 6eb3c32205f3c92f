/**
 * Stores a batch of messages in one statement: the rows (their fields as one
 * jsonb parameter, an array of positional arrays; bodies as one bytea
 * parameter, bytea-batch.ts; the row is its CREATED event), and one NOTIFY on the
 * engine's channel when any of them is due now — a NOTIFY serialises commits,
 * so it is sent once per batch, never per message (README "Architecture: the delivery engine").
 * Queued messages wait off the work list until their queue starts them;
 * times come from the database clock.
 *
 * The rows travel as one jsonb document rather than an array per column:
 * measured on a batch of ten (bench/READING.md, issue 28), postgres.js
 * serialises 30 arrays element by element, escaping each, and Postgres parses
 * each array literal, where `JSON.stringify` is native and jsonb is parsed
 * once; nested values (headers, labels) stay JSON instead of text in text.
 *
 * A process that delivers too can store immediate messages already claimed by
 * its worker (`insertClaimedMessageRows`): those rows skip the work list, the
 * claim is registered in the same statement (crash safety is the claim's, as
 * for `claim-messages.ts`), and they come back so the attempts start at once.
 *
 * The columns are written once, in `COLUMNS`: each names the row field it is
 * made of, its type and, where the stored value is made in SQL, how. The
 * statement is built from that table once, when the module loads; a call only
 * gathers the parameters.
 */
import type postgres from "postgres";
import { byteaBatch, byteaSliceSql } from "../bytea-batch";
import type { Tx } from "../client";
import { destinationOf } from "../destination";
import type { MessageRow } from "../message-columns";
import type { ClaimedMessage } from "./claim-messages";
import { DESTINATION_HELD } from "./destination-health";
import { DUE_CHANNEL, dueInPayload } from "./work-list";


/** What a new row needs; the rest is defaulted or derived in SQL. */
export type MessageInsert = Pick<
  MessageRow,
  | "id" | "project" | "dialect" | "origin" | "sourceMessageId" | "url" | "topicName" | "endpointName" | "queueName" | "api"
  | "method" | "headers" | "contentType" | "body" | "timeoutMs" | "maxRetries" | "retryDelayExpression"
  | "callback" | "callbackHeaders" | "failureCallback" | "failureCallbackHeaders" | "deduplicationId" | "labels"
  | "redactFields" | "scheduleId" | "callerIp" | "traceparent"
> & {
  /** The instant of the first attempt, Unix ms (domain/publish/not-before.ts); wins over `delayMs`. */
  notBeforeMs: number | null;
  delayMs: number;
  /** The flow-control key and its limits, if any (`flow_control_key`, `flow_control_value`). */
  flowControl: { key: string; value: string } | null;
  /** The workflow run the message is bound to, once bound, and the call it makes (`workflow_call_type`). */
  workflowRunPk?: number;
  workflow: { callType: string } | null;
};

/** The call a row makes in its workflow run, once bound to one (a message not bound makes none). */
function workflowCallType(row: MessageInsert): ClaimedMessage["workflowCallType"] {
  return row.workflowRunPk === undefined || row.workflow === null ? null : (row.workflow.callType as ClaimedMessage["workflowCallType"]);
}

/**
 * A column of the insert: `name` in the rows as read, sent at its position in
 * each row's array as JSON and read as `type` (`jsonb` stays a JSON value),
 * stored as `stored` (default: as read).
 */
interface InsertColumn {
  name: string;
  type: "text" | "int" | "bigint" | "boolean" | "jsonb";
  value: (row: MessageInsert) => unknown;
  stored?: string;
  /** Not a column of the table: used to compute others (`due_at` and the like). */
  input?: true;
}

const textArray = (column: string) => `array(select jsonb_array_elements_text(${column}))`;

const COLUMNS: InsertColumn[] = [
  { name: "id", type: "text", value: (r) => r.id },
  { name: "project", type: "text", value: (r) => r.project },
  { name: "dialect", type: "text", value: (r) => r.dialect },
  { name: "origin", type: "text", value: (r) => r.origin },
  { name: "source_message_id", type: "text", value: (r) => r.sourceMessageId },
  { name: "url", type: "text", value: (r) => r.url },
  { name: "destination", type: "text", value: (r) => destinationOf(r.url) },
  { name: "topic_name", type: "text", value: (r) => r.topicName },
  { name: "endpoint_name", type: "text", value: (r) => r.endpointName },
  { name: "queue_name", type: "text", value: (r) => r.queueName },
  { name: "api", type: "text", value: (r) => r.api },
  { name: "method", type: "text", value: (r) => r.method },
  { name: "headers", type: "jsonb", value: (r) => r.headers },
  { name: "content_type", type: "text", value: (r) => r.contentType },
  { name: "timeout_ms", type: "int", value: (r) => r.timeoutMs },
  { name: "max_retries", type: "int", value: (r) => r.maxRetries },
  { name: "retry_delay_expression", type: "text", value: (r) => r.retryDelayExpression },
  { name: "callback", type: "text", value: (r) => r.callback },
  { name: "callback_headers", type: "jsonb", value: (r) => r.callbackHeaders },
  { name: "failure_callback", type: "text", value: (r) => r.failureCallback },
  { name: "failure_callback_headers", type: "jsonb", value: (r) => r.failureCallbackHeaders },
  { name: "deduplication_id", type: "text", value: (r) => r.deduplicationId },
  { name: "labels", type: "jsonb", value: (r) => r.labels, stored: textArray("labels") },
  {
    name: "redact_fields",
    type: "jsonb",
    value: (r) => r.redactFields,
    stored: `case when redact_fields is not null then ${textArray("redact_fields")} end`,
  },
  { name: "schedule_id", type: "text", value: (r) => r.scheduleId },
  { name: "caller_ip", type: "text", value: (r) => r.callerIp },
  { name: "traceparent", type: "text", value: (r) => r.traceparent },
  { name: "workflow_run_pk", type: "bigint", value: (r) => r.workflowRunPk ?? null },
  { name: "workflow_call_type", type: "text", value: (r) => workflowCallType(r) },
  { name: "flow_control_key", type: "text", value: (r) => r.flowControl?.key ?? null },
  { name: "flow_control_value", type: "text", value: (r) => r.flowControl?.value ?? null },
  { name: "not_before_ms", type: "bigint", value: (r) => r.notBeforeMs, input: true },
  { name: "delay_ms", type: "bigint", value: (r) => r.delayMs, input: true },
];

/**
 * Each row's array ends with these, which the call supplies: where its body
 * starts in the batch's bytes and its length (bytea-batch.ts), and whether it
 * is stored claimed.
 */
const TRAILING: Pick<InsertColumn, "name" | "type">[] = [
  { name: "body_offset", type: "int" },
  { name: "body_length", type: "int" },
  { name: "claimed", type: "boolean" },
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

/** The parameters: the rows, the bodies, the delay scale, the channel; the claiming statement's worker. */
const [ROWS, BODIES, DELAY_SCALE, CHANNEL, WORKER] = ["$1", "$2", "$3", "$4", "$5"];

const STORED = COLUMNS.filter((column) => !column.input);

/** Field `i` of the row array `v`, as SQL of its type; a JSON null is SQL's null whatever the type. */
function field(v: string, i: number, { name, type }: Pick<InsertColumn, "name" | "type">): string {
  return `${type === "jsonb" ? `nullif(${v}->${i}, 'null')` : `(${v}->>${i})::${type}`} as ${name}`;
}

/** The rows as sent, with their bodies and first attempt's time. */
const TIMED = `
  with r as (
    select ${[...COLUMNS, ...TRAILING].map((column, i) => field("e.v", i, column)).join(", ")}, e.n
    from jsonb_array_elements(${ROWS}::jsonb) with ordinality as e(v, n)),
  timed as (
    select r.*, ${byteaSliceSql(BODIES, "r.body_offset", "r.body_length")} as body, t.due, greatest(now() + (t.due - now()) * ${DELAY_SCALE}::float8, now()) as next
    from r, lateral (
      select coalesce(to_timestamp(r.not_before_ms / 1000.0), now() + r.delay_ms * interval '1 millisecond') as due) t)`;

/** `insert … select` of the timed rows, the computed columns' expressions given. */
const insertTimed = (computed: Record<string, string>, returning: string) => `
    insert into dispatch.messages (${[...STORED.map((column) => column.name), ...Object.keys(computed)].join(", ")})
    select ${[...STORED.map((column) => column.stored ?? column.name), ...Object.values(computed)].join(", ")}
    from timed order by n
    returning ${returning}`;

/**
 * One NOTIFY when any inserted row is on the work list (claimed rows never are), saying when the earliest is
 * due (work-list.ts). Counted, not returned: on Citus the outer statement's rows pass through the
 * coordinator, which cannot hold a `void`.
 */
const NOTIFY = `select count(pg_notify(${CHANNEL}, ${dueInPayload("due.at")})) from (select min(due_at) as at from inserted) as due where due.at is not null`;

const INSERT = `${TIMED},
  inserted as (${insertTimed(COMPUTED, "due_at")})
  ${NOTIFY}`;

/**
 * A row marked `claimed` is taken by the worker unless its destination holds
 * its messages (an open circuit, a 429's hold: read here, in the statement,
 * since a circuit opened by another replica or by hand a moment ago must
 * hold): then it goes on the work list, and the claim sets it aside.
 */
const TAKEN = "(claimed and destination not in (select destination from held))";

/**
 * The same insert, the rows marked `claimed` (and `TAKEN`) stored under a new claim of
 * `WORKER` (off the work list, as `claim-messages.ts` leaves a claimed row). On Citus
 * (`byProject`), a claim per project, naming it: a claim lives beside its messages, on
 * their project's node, and concurrent publishes of several projects share the statement.
 * It answers, for the claimed rows, only the columns the database made
 * (`claimedRow` builds the rest from what the caller holds: measured, parsing
 * whole rows back cost 6 µs of CPU per message); the NOTIFY's aggregate is
 * the outer side of the join, so it runs whether or not any row was claimed.
 */
function insertClaimed(byProject: boolean): string {
  const claims = byProject
    ? `claims as materialized (
    select p.project, nextval('dispatch.claims_id_seq') as id from (select distinct project from timed where ${TAKEN}) p)`
    : `claim as materialized (
    select nextval('dispatch.claims_id_seq') as id where exists (select 1 from timed where ${TAKEN}))`;
  const claimOfRow = byProject ? "(select c.id from claims c where c.project = timed.project)" : "(select id from claim)";
  const registered = byProject
    ? `insert into dispatch.claims (id, project, worker_id, message_ids) overriding system value
    select c.id, c.project, ${WORKER}, array(select i.id from inserted i where i.claim_id = c.id) from claims c`
    : `insert into dispatch.claims (id, worker_id, message_ids) overriding system value
    select claim.id, ${WORKER}, array(select id from inserted where claim_id is not null) from claim`;
  return `${TIMED},
  held as materialized (select d.destination from dispatch.destinations d where ${DESTINATION_HELD}),
  ${claims},
  inserted as (${insertTimed(
    {
      ...COMPUTED,
      due_at: `case when ${TAKEN} then null else ${COMPUTED.due_at} end`,
      claim_id: `case when ${TAKEN} then ${claimOfRow} end`,
    },
    "id, seq, claim_id, due_at, not_before, next_delivery_at, created_at",
  )}),
  registered as (
    ${registered}),
  notified as (${NOTIFY})
  select i.id, i.seq, i.claim_id as "claimId", i.not_before as "notBefore", i.next_delivery_at as "nextDeliveryAt",
    i.created_at as "createdAt"
  from (select count(*) from notified) as n left join inserted i on i.claim_id is not null`;
}

const INSERT_CLAIMED = insertClaimed(false);
const INSERT_CLAIMED_BY_PROJECT = insertClaimed(true);

/** What the database made of a claimed row. */
type MadeColumns = Pick<ClaimedMessage, "id" | "seq" | "claimId" | "notBefore" | "nextDeliveryAt" | "createdAt">;

/**
 * A row stored claimed, as `claim-messages.ts` would read it back: what was
 * inserted, the columns' defaults, and what the database made. Each column
 * stored from the insert is stored as given but for `labels` (none stored as
 * an empty list); test/insert-claimed.test.ts compares it with the stored row.
 */
function claimedRow(row: MessageInsert, made: MadeColumns): ClaimedMessage {
  // One literal, no spread: V8 builds it from a fixed shape (a spread then 40 more fields cost 60 µs).
  return {
    id: made.id,
    project: row.project,
    seq: made.seq,
    dialect: row.dialect,
    state: "CREATED",
    origin: row.origin,
    sourceMessageId: row.sourceMessageId,
    url: row.url,
    topicName: row.topicName,
    endpointName: row.endpointName,
    queueName: row.queueName,
    queueStarted: false,
    api: row.api,
    workflowRunPk: row.workflowRunPk ?? null,
    workflowCallType: workflowCallType(row),
    method: row.method,
    headers: row.headers,
    contentType: row.contentType,
    body: row.body,
    timeoutMs: row.timeoutMs,
    maxRetries: row.maxRetries,
    retried: 0,
    retryDelayExpression: row.retryDelayExpression,
    callback: row.callback,
    callbackHeaders: row.callbackHeaders,
    failureCallback: row.failureCallback,
    failureCallbackHeaders: row.failureCallbackHeaders,
    deduplicationId: row.deduplicationId,
    labels: row.labels ?? [],
    redactFields: row.redactFields,
    scheduleId: row.scheduleId,
    flowControlKey: row.flowControl?.key ?? null,
    flowControlValue: row.flowControl?.value ?? null,
    flowActive: false,
    flowParked: false,
    destination: destinationOf(row.url),
    destinationParked: false,
    callerIp: row.callerIp,
    traceparent: row.traceparent,
    notBefore: made.notBefore,
    nextDeliveryAt: made.nextDeliveryAt,
    dueAt: null,
    claimId: made.claimId,
    pendingQueue: row.queueName,
    retriedAs: null,
    retriedAt: null,
    canceledSeq: null,
    createdAt: made.createdAt,
    completedAt: null,
  };
}

/**
 * Inserts `rows` in order (their `seq` follows the array). `delayScale`
 * multiplies the wait before each first attempt; `not_before` keeps what was asked.
 */
export async function insertMessageRows(tx: Tx, rows: MessageInsert[], delayScale: number): Promise<void> {
  // Prepared as a tagged statement would be (postgres.js's `unsafe` prepares nothing unless
  // asked): an unprepared statement with parameters costs a Describe round trip, and a
  // commit, first. The pool's own `prepare: false` (behind a pooler) still wins.
  await tx.unsafe(INSERT, rowParameters(tx, rows, delayScale, null) as never[], { prepare: true });
}

/**
 * The parameters both inserts begin with: the rows (each its columns' values,
 * then its body's place and whether it is claimed), the bodies, the delay
 * scale, the channel.
 */
function rowParameters(tx: Tx, rows: MessageInsert[], delayScale: number, claimed: boolean[] | null): unknown[] {
  const bodies = byteaBatch(rows.map((row) => row.body));
  const values = rows.map((row, i) => {
    const value: unknown[] = COLUMNS.map((column) => column.value(row));
    value.push(bodies.offsets[i], bodies.lengths[i], claimed?.[i] ?? false);
    return value;
  });
  return [tx.json(values as postgres.JSONValue), bodies.bytes, delayScale, DUE_CHANNEL];
}

/**
 * `insertMessageRows`, storing the rows `claimed` marks already claimed by
 * `workerId` (each must be due now, outside queues and flow control: the
 * caller decides), under a claim per project when `claimsByProject`.
 * Returns those rows as a claim returns them, in order, their bodies the ones given.
 */
export async function insertClaimedMessageRows(
  tx: Tx,
  rows: MessageInsert[],
  delayScale: number,
  claimed: boolean[],
  workerId: string,
  claimsByProject: boolean,
): Promise<ClaimedMessage[]> {
  const parameters = [...rowParameters(tx, rows, delayScale, claimed), workerId];
  const statement = claimsByProject ? INSERT_CLAIMED_BY_PROJECT : INSERT_CLAIMED;
  const answered = await tx.unsafe<MadeColumns[]>(statement, parameters as never[], { prepare: true });
  const madeOf = new Map(answered.map((made) => [made.id, made]));
  const claimedRows: ClaimedMessage[] = [];
  for (const row of rows) {
    const made = madeOf.get(row.id);
    if (made !== undefined) claimedRows.push(claimedRow(row, made));
  }
  return claimedRows;
}
