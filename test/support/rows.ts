/**
 * What the tests read from Dispatch's tables, one helper per question, so
 * that a renamed column or table changes this file and not the tests. Rows
 * come back with the schema's own names (src/db/schema.ts), camel-cased.
 * Tests about the SQL itself (schema drift, retention, upgrades, privileges,
 * rows faked to set up a race) keep their statements.
 */
import type { Sql } from "../../src/db/client";
import type { TestService } from "./service";

/** A test service's database, or a connection of its own (one that outlives the service, another process's). */
export type Database = Pick<TestService, "service"> | Sql;

const sqlOf = (db: Database): Sql => (typeof db === "function" ? db : db.service.sql);

/** `conditions` joined with `and` (true when there are none). */
function all(sql: Sql, conditions: (ReturnType<Sql> | false | undefined)[]) {
  return conditions.reduce<ReturnType<Sql>>((joined, condition) => (condition ? sql`${joined} and ${condition}` : joined), sql`true`);
}

/** A message as stored. */
export interface StoredMessage {
  id: string;
  state: string;
  origin: string;
  sourceMessageId: string | null;
  url: string;
  topicName: string | null;
  queueName: string | null;
  scheduleId: string | null;
  flowControlKey: string | null;
  maxRetries: number;
  retried: number;
  redactFields: string[] | null;
  body: Buffer;
  createdAt: Date;
  notBefore: Date;
  /** `notBefore - createdAt` to the microsecond: the delay the message was published with. */
  delayMs: number;
  /** When a worker may claim its next attempt (null while one is in flight, queued or finished). */
  dueAt: Date | null;
}

/** Which messages: every field given must hold. */
export interface MessageFilter {
  ids?: string[];
  url?: string;
  /** A SQL `like` pattern on the URL. */
  urlLike?: string;
  /** A URL group's name. */
  topicName?: string;
  queueName?: string;
  api?: string;
  scheduleId?: string;
  flowControlKey?: string;
  /** The callbacks and failure callbacks of this message. */
  sourceMessageId?: string;
  origin?: string;
  states?: string[];
  /** Any state but these. */
  statesOtherThan?: string[];
  /** Still on the engine's work list (`dueAt` set). */
  due?: boolean;
  /** Claimed by a worker: an attempt is in flight. */
  claimed?: boolean;
  /** The messages of the runs with these ids. */
  workflowRunIds?: string[];
  /** The messages of the run with this key (`StoredRun.pk`). */
  workflowRunPk?: number;
  /** A workflow message of this call type (docs/workflow-protocol.md §2.1). */
  workflowCallType?: string;
  /** The body, read as UTF-8, contains this text. */
  bodyContains?: string;
}

function messageConditions(sql: Sql, f: MessageFilter) {
  return all(sql, [
    f.ids !== undefined && sql`id = any(${f.ids}::text[])`,
    f.url !== undefined && sql`url = ${f.url}`,
    f.urlLike !== undefined && sql`url like ${f.urlLike}`,
    f.topicName !== undefined && sql`topic_name = ${f.topicName}`,
    f.queueName !== undefined && sql`queue_name = ${f.queueName}`,
    f.api !== undefined && sql`api = ${f.api}`,
    f.scheduleId !== undefined && sql`schedule_id = ${f.scheduleId}`,
    f.flowControlKey !== undefined && sql`flow_control_key = ${f.flowControlKey}`,
    f.sourceMessageId !== undefined && sql`source_message_id = ${f.sourceMessageId}`,
    f.origin !== undefined && sql`origin = ${f.origin}`,
    f.states !== undefined && sql`state = any(${f.states}::text[])`,
    f.statesOtherThan !== undefined && sql`state <> all(${f.statesOtherThan}::text[])`,
    f.due !== undefined && (f.due ? sql`due_at is not null` : sql`due_at is null`),
    f.claimed !== undefined && (f.claimed ? sql`claim_id is not null` : sql`claim_id is null`),
    f.workflowRunIds !== undefined &&
      sql`workflow_run_pk in (select pk from dispatch.workflow_runs where run_id = any(${f.workflowRunIds}::text[]))`,
    f.workflowRunPk !== undefined && sql`workflow_run_pk = ${f.workflowRunPk}`,
    f.workflowCallType !== undefined && sql`workflow_call_type = ${f.workflowCallType}`,
    f.bodyContains !== undefined && sql`convert_from(body, 'UTF8') like ${`%${f.bodyContains}%`}`,
  ]);
}

/** The messages `filter` selects, in publish order. */
export async function messagesWhere(db: Database, filter: MessageFilter): Promise<StoredMessage[]> {
  const sql = sqlOf(db);
  return sql<StoredMessage[]>`
    select id, state, origin, source_message_id as "sourceMessageId", url, topic_name as "topicName",
      queue_name as "queueName", schedule_id as "scheduleId", flow_control_key as "flowControlKey",
      max_retries as "maxRetries", retried, redact_fields as "redactFields", body, created_at as "createdAt",
      not_before as "notBefore", (extract(epoch from not_before - created_at) * 1000)::float8 as "delayMs",
      due_at as "dueAt"
    from dispatch.messages where ${messageConditions(sql, filter)} order by seq`;
}

/** How many messages `filter` selects (every message without one). */
export async function countMessages(db: Database, filter: MessageFilter = {}): Promise<number> {
  const sql = sqlOf(db);
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from dispatch.messages where ${messageConditions(sql, filter)}`;
  return row!.n;
}

/** Message `id` as stored, or undefined when there is none. */
export async function storedMessage(db: Database, id: string): Promise<StoredMessage | undefined> {
  return (await messagesWhere(db, { ids: [id] }))[0];
}

/** The state of message `id`, or undefined when there is none. */
export async function messageState(db: Database, id: string): Promise<string | undefined> {
  return (await storedMessage(db, id))?.state;
}

/**
 * How many of the messages `ids` flow control holds back: unclaimed, not
 * admitted, and parked off the work list or due again only later.
 */
export async function heldBackCount(db: Database, ids: string[]): Promise<number> {
  const [row] = await sqlOf(db)<{ n: number }[]>`
    select count(*)::int as n from dispatch.messages
    where id = any(${ids}::text[]) and claim_id is null and not flow_active and (flow_parked or due_at > now())`;
  return row!.n;
}

/** An event of a message's log (`dispatch.message_events`). */
export interface LoggedEvent {
  state: string;
  error: string | null;
  /** Milliseconds from the event to the next delivery it set (a RETRY's backoff), or null. */
  waitMs: number | null;
}

/** The log of message `id`, oldest first. */
export async function messageEvents(db: Database, id: string): Promise<LoggedEvent[]> {
  return sqlOf(db)<LoggedEvent[]>`
    select state, error, (extract(epoch from (next_delivery_at - at)) * 1000)::float8 as "waitMs"
    from dispatch.message_events where message_id = ${id} order by id`;
}

/** The states of message `id`'s log, oldest first. */
export async function eventStates(db: Database, id: string): Promise<string[]> {
  return (await messageEvents(db, id)).map((event) => event.state);
}

/** A delivery attempt as recorded. */
export interface StoredAttempt {
  messageId: string;
  startedAt: Date;
  error: string | null;
}

/** The attempts of the messages `ids`, in the order they were recorded. */
export async function attempts(db: Database, ids: string[]): Promise<StoredAttempt[]> {
  return sqlOf(db)<StoredAttempt[]>`
    select message_id as "messageId", started_at as "startedAt", error
    from dispatch.attempts where message_id = any(${ids}::text[]) order by id`;
}

/** How many attempts the messages `ids` have had, together. */
export async function attemptsOf(db: Database, ids: string[]): Promise<number> {
  return (await attempts(db, ids)).length;
}

/** A DLQ entry as stored. */
export interface StoredDlqEntry {
  dlqId: string;
  messageId: string;
  responseStatus: number | null;
  responseBody: Buffer | null;
}

/** The DLQ's entries (of message `messageId` only, when given). */
export async function dlqEntries(db: Database, messageId?: string): Promise<StoredDlqEntry[]> {
  const sql = sqlOf(db);
  return sql<StoredDlqEntry[]>`
    select dlq_id as "dlqId", message_id as "messageId", response_status as "responseStatus", response_body as "responseBody"
    from dispatch.dlq where ${messageId === undefined ? sql`true` : sql`message_id = ${messageId}`} order by created_at`;
}

/** A claim: the messages a worker took, whose attempts are in flight. */
export interface StoredClaim {
  workerId: string;
  messageIds: string[];
  claimedAt: Date;
}

/** The claims in flight. */
export async function storedClaims(db: Database): Promise<StoredClaim[]> {
  return sqlOf(db)<StoredClaim[]>`
    select worker_id as "workerId", message_ids as "messageIds", claimed_at as "claimedAt" from dispatch.claims order by id`;
}

/** The registered workers (one per engine process and role), with their last heartbeat. */
export async function storedWorkers(db: Database): Promise<{ id: string; processId: string; heartbeatAt: Date }[]> {
  return sqlOf(db)`select id, process_id as "processId", heartbeat_at as "heartbeatAt" from dispatch.workers order by id`;
}

/** A workflow run as stored. */
export interface StoredRun {
  pk: number;
  runId: string;
  state: string;
  workflowUrl: string;
  config: Record<string, unknown>;
  userHeaders: Record<string, string>;
  labels: string[] | null;
  response: string | null;
  dlqId: string | null;
  failureCallbackMessageId: string | null;
  failureCallbackState: string | null;
  stalledAt: Date | null;
  createdAt: Date;
}

/** Which runs: every field given must hold. */
export interface RunFilter {
  runIds?: string[];
  /** Runs invoked by the run with this id. */
  invokedBy?: string;
  /** A SQL `like` pattern on the workflow URL. */
  urlLike?: string;
}

/** The runs `filter` selects (every run without one), oldest first. */
export async function storedRuns(db: Database, filter: RunFilter = {}): Promise<StoredRun[]> {
  const sql = sqlOf(db);
  return sql<StoredRun[]>`
    select pk, run_id as "runId", state, workflow_url as "workflowUrl", config, user_headers as "userHeaders", labels,
      response, dlq_id as "dlqId", failure_callback_message_id as "failureCallbackMessageId",
      failure_callback_state as "failureCallbackState", stalled_at as "stalledAt", created_at as "createdAt"
    from dispatch.workflow_runs
    where ${all(sql, [
      filter.runIds !== undefined && sql`run_id = any(${filter.runIds}::text[])`,
      filter.invokedBy !== undefined && sql`invoker->>'workflowRunId' = ${filter.invokedBy}`,
      filter.urlLike !== undefined && sql`workflow_url like ${filter.urlLike}`,
    ])}
    order by pk`;
}

/** The latest run with id `runId` (a run id may be reused once its run has ended), or undefined. */
export async function storedRun(db: Database, runId: string): Promise<StoredRun | undefined> {
  return (await storedRuns(db, { runIds: [runId] })).at(-1);
}

/** The step list of the latest run with id `runId`, in order: each entry's call type and body. */
export async function workflowSteps(db: Database, runId: string): Promise<{ callType: string; body: Buffer }[]> {
  return sqlOf(db)`
    select call_type as "callType", body from dispatch.workflow_steps
    where run_pk = (select max(pk) from dispatch.workflow_runs where run_id = ${runId}) order by seq`;
}

/** How many runs wait for an event (for `eventId` only, when given). */
export async function waiterCount(db: Database, eventId?: string): Promise<number> {
  const sql = sqlOf(db);
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from dispatch.workflow_waiters where ${eventId === undefined ? sql`true` : sql`event_id = ${eventId}`}`;
  return row!.n;
}

/** How many notifications wait for their run's wait (of run `runId`, of event `eventId`, when given). */
export async function notificationCount(db: Database, filter: { runId?: string; eventId?: string } = {}): Promise<number> {
  const sql = sqlOf(db);
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from dispatch.workflow_notifications
    where ${all(sql, [
      filter.runId !== undefined && sql`run_id = ${filter.runId}`,
      filter.eventId !== undefined && sql`event_id = ${filter.eventId}`,
    ])}`;
  return row!.n;
}

/** The stored schedules' ids and destinations (of schedule `id`, or to `destination`, when given). */
export async function storedSchedules(
  db: Database,
  filter: { id?: string; destination?: string } = {},
): Promise<{ id: string; destination: string }[]> {
  const sql = sqlOf(db);
  return sql`
    select id, destination from dispatch.schedules
    where ${all(sql, [
      filter.id !== undefined && sql`id = ${filter.id}`,
      filter.destination !== undefined && sql`destination = ${filter.destination}`,
    ])}
    order by id`;
}

/** The queues' names, in the database's order. */
export async function queueNames(db: Database): Promise<string[]> {
  return (await sqlOf(db)<{ name: string }[]>`select name from dispatch.queues order by name`).map((row) => row.name);
}

/** The value of setting `key` (`dispatch.settings`), or undefined. */
export async function setting(db: Database, key: string): Promise<unknown> {
  const [row] = await sqlOf(db)<{ value: unknown }[]>`select value from dispatch.settings where key = ${key}`;
  return row?.value;
}

/** Every row of the tables a refused request must leave as they were: messages, queues, URL group endpoints, notifications. */
export async function storedRowCount(db: Database): Promise<number> {
  const [row] = await sqlOf(db)<{ n: number }[]>`
    select ((select count(*) from dispatch.messages) + (select count(*) from dispatch.queues)
      + (select count(*) from dispatch.url_group_endpoints) + (select count(*) from dispatch.workflow_notifications))::int as n`;
  return row!.n;
}

/**
 * Rows in each of Dispatch's tables (and graphile-worker's job tables, with
 * `jobs`), for tests that prove a refused request changed nothing. The engine's
 * bookkeeping is left out: claims, workers and destinations change as the
 * worker runs, and a token's last use (`access_token_uses`) is noted in the
 * background at most once a minute whatever the request's outcome.
 */
export async function rowCounts(db: Database, options: { jobs?: boolean } = {}): Promise<Record<string, number>> {
  const sql = sqlOf(db);
  const tables = await sql<{ name: string }[]>`
    select format('%I.%I', table_schema, table_name) as name from information_schema.tables
    where table_type = 'BASE TABLE'
      and ((table_schema = 'dispatch' and table_name not in ('claims', 'workers', 'destinations', 'access_token_uses'))
        or (${options.jobs ?? false} and table_schema = 'graphile_worker' and table_name in ('jobs', '_private_jobs')))
    order by 1`;
  if (options.jobs && !tables.some((table) => table.name.startsWith("graphile_worker."))) throw new Error("graphile-worker's job tables are missing");
  const counts: Record<string, number> = {};
  for (const { name } of tables) counts[name] = Number((await sql.unsafe(`select count(*) from ${name}`))[0]!.count);
  return counts;
}
