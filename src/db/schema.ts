/**
 * The app's tables, all in the `dispatch` schema (graphile-worker owns `graphile_worker`).
 *
 * Everything a user or an auditor needs is here and queryable with plain SQL:
 * messages, their event log, the dead letter queue, deduplication windows and
 * the service's own settings (access tokens, signing keys).
 *
 * drizzle-kit generates `sql/migrations` from this file; queries themselves are
 * written as SQL with postgres.js (see `src/db/client.ts`).
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  foreignKey,
  index,
  integer,
  primaryKey,
  jsonb,
  pgSchema,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

import {
  ATTEMPT_RESULTS,
  CIRCUIT_STATES,
  type CircuitState,
  type AttemptResult,
  DIALECTS,
  type Dialect,
  EVENT_STATES,
  type EventState,
  FAILURE_FUNCTION_STATES,
  type FailureFunctionState,
  MESSAGE_ORIGINS,
  MESSAGE_STATES,
  type MessageOrigin,
  type MessageState,
  DEFAULT_PROJECT,
  PENDING_STATES,
  RUN_STATES,
  type RunState,
  sqlList,
  WORKFLOW_CALL_TYPES,
  type WorkflowCallType,
} from "./vocabulary";

/** `column in (…words)`, for CHECK constraints. */
const oneOf = (column: unknown, words: readonly string[]) => sql`${column} in (${sql.raw(sqlList(words))})`;

export const dispatch = pgSchema("dispatch");

const bytea = customType<{ data: Buffer }>({ dataType: () => "bytea" });
const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * Projects: the teams one Dispatch serves, each owning its tokens, signing
 * keys and every resource. Every database has `default` (DEFAULT_PROJECT),
 * which owns all that was there before projects existed.
 */
export const projects = dispatch.table("projects", {
  name: text("name").primaryKey(),
  createdAt: timestamptz("created_at").notNull().default(sql`now()`),
  /** Quotas (domain/projects/quotas.ts): messages a day (UTC), publish requests a second; null for none. */
  messagesPerDay: integer("messages_per_day"),
  publishesPerSecond: integer("publishes_per_second"),
});

/** Messages each project with a daily quota published on each day (UTC), counted against it. */
export const projectUsage = dispatch.table(
  "project_usage",
  {
    project: text("project")
      .notNull()
      .references(() => projects.name, { onDelete: "cascade" }),
    day: date("day").notNull(),
    messages: integer("messages").notNull(),
  },
  (t) => [primaryKey({ columns: [t.project, t.day] })],
);

/**
 * The project a row belongs to. The tables written on the delivery path
 * (messages, attempts, the DLQ, deduplication, workflow rows) carry it without
 * a foreign key: a check per inserted row there would cost every publish, and
 * deleting a project deletes its rows itself. The operator's tables reference
 * `projects`.
 */
const project = () => text("project").notNull().default(DEFAULT_PROJECT);
/** `project()` for the operator's tables: deleting a project deletes its rows. */
const ownedBy = () =>
  project().references(() => projects.name, { onDelete: "cascade" });


/** A published message: what to deliver, where, and how to retry and call back. */
export const messages = dispatch.table(
  "messages",
  {
    id: text("id").primaryKey(),
    project: project(),
    /** Publish order: queues deliver in this order, cursors page by it. */
    seq: bigint("seq", { mode: "number" }).notNull().generatedAlwaysAsIdentity(),
    /** Header dialect the message was published in: `svc` (native) or `upstash` (compat). */
    dialect: text("dialect").$type<Dialect>().notNull(),
    state: text("state").$type<MessageState>().notNull().default("CREATED"),
    /** Why the message exists: a publish, a callback or a failure callback of another message. */
    origin: text("origin").$type<MessageOrigin>().notNull().default("publish"),
    sourceMessageId: text("source_message_id"),
    url: text("url").notNull(),
    topicName: text("topic_name"),
    endpointName: text("endpoint_name"),
    queueName: text("queue_name"),
    /**
     * A queued message holds one of its queue's parallelism slots from when it
     * is started until it is delivered, failed or cancelled (retries included).
     */
    queueStarted: boolean("queue_started").notNull().default(false),
    api: text("api"),
    /** The workflow run the message belongs to, and its role in it (docs/workflow-protocol.md §2.1). */
    workflowRunPk: bigint("workflow_run_pk", { mode: "number" }),
    workflowCallType: text("workflow_call_type").$type<WorkflowCallType>(),
    method: text("method").notNull(),
    /** Headers sent to the destination (forwarded headers, canonical names). */
    headers: jsonb("headers").$type<Record<string, string>>().notNull(),
    contentType: text("content_type"),
    body: bytea("body").notNull(),
    timeoutMs: integer("timeout_ms"),
    maxRetries: integer("max_retries").notNull(),
    /** Retries done so far; the next attempt sends it as the Retried header. */
    retried: integer("retried").notNull().default(0),
    retryDelayExpression: text("retry_delay_expression"),
    callback: text("callback"),
    /** Publish headers (in the message's dialect) of the callback message. */
    callbackHeaders: jsonb("callback_headers").$type<Record<string, string>>(),
    failureCallback: text("failure_callback"),
    failureCallbackHeaders: jsonb("failure_callback_headers").$type<Record<string, string>>(),
    deduplicationId: text("deduplication_id"),
    labels: text("labels").array(),
    /**
     * What the API shows as `REDACTED:<hash>` (domain/messages/redaction.ts): `body`,
     * `header`, `header[<name>]`, and `source:…` on callbacks. The row keeps
     * the originals; they are delivered.
     */
    redactFields: text("redact_fields").array(),
    scheduleId: text("schedule_id"),
    /** Flow control (docs/hosted-api.md §11): the key and the value as published, normalised. */
    flowControlKey: text("flow_control_key"),
    flowControlValue: text("flow_control_value"),
    /** An attempt admitted by its flow-control key is under way: it counts against the key's parallelism. */
    flowActive: boolean("flow_active").notNull().default(false),
    /**
     * Due, but held back by its flow-control key (paused, or at its limit):
     * off the work list until a finished attempt or a freed rate slot lets it go.
     */
    flowParked: boolean("flow_parked").notNull().default(false),
    /**
     * The origin (scheme://host[:port]) the message is delivered to: the unit of
     * fair delivery slots and of circuit breakers (`dispatch.destinations`).
     * Null only on rows finished before it was recorded.
     */
    destination: text("destination"),
    /**
     * Due, but held back by its destination (its circuit is open, or it holds
     * its share of the worker's slots): off the work list and unclaimed, in the
     * destination's own line (`next_delivery_at` order) until a worker with room
     * for the destination takes it (`claim-messages.ts`).
     */
    destinationParked: boolean("destination_parked").notNull().default(false),
    callerIp: text("caller_ip"),
    /**
     * The W3C trace context its attempts are child spans of (observability/tracing.ts):
     * the publisher's `traceparent`, else its publish span's; null when tracing was off.
     */
    traceparent: text("traceparent"),
    notBefore: timestamptz("not_before").notNull(),
    nextDeliveryAt: timestamptz("next_delivery_at").notNull(),
    /**
     * When a worker may claim the next attempt. Null while an attempt is in
     * flight, while a queued message waits for a slot, and once the message is
     * finished: the engine's work list is the index on this column.
     */
    dueAt: timestamptz("due_at"),
    /** The claim (`dispatch.claims`) of the latest attempt; an outcome is recorded only under it. */
    claimId: bigint("claim_id", { mode: "number" }),
    /**
     * The queue while the message is pending in it (waiting for or holding a
     * slot); null once finished and for unqueued messages. Queue scans use it
     * instead of `state`, so that no index depends on `state` and finishing an
     * unqueued message is a HOT update.
     */
    pendingQueue: text("pending_queue"),
    /**
     * Set on a failed message once its DLQ entry was retried (domain/dlq/retry-links.ts): the
     * message the retry published. The entry itself is gone, as the API has it.
     */
    retriedAs: text("retried_as"),
    /** With `retried_as`: the retry's `created_at`, so the retry finds this message through the same index. */
    retriedAt: timestamptz("retried_at"),
    /** Position of the message's cancellation in the log (from the `seq` sequence); null unless cancelled. */
    canceledSeq: bigint("canceled_seq", { mode: "number" }),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    completedAt: timestamptz("completed_at"),
  },
  (t) => [
    check("messages_state_check", oneOf(t.state, MESSAGE_STATES)),
    check("messages_dialect_check", oneOf(t.dialect, DIALECTS)),
    check("messages_origin_check", oneOf(t.origin, MESSAGE_ORIGINS)),
    check("messages_workflow_call_type_check", sql`${t.workflowCallType} is null or ${oneOf(t.workflowCallType, WORKFLOW_CALL_TYPES)}`),
    check("messages_retries_check", sql`${t.retried} >= 0 and ${t.maxRetries} >= 0`),
    check(
      "messages_completed_check",
      sql`(${t.state} in ('DELIVERED','FAILED','CANCELED')) = (${t.completedAt} is not null)`,
    ),
    // Lists, logs and retention read a project's messages by time.
    index("messages_project_created_at_idx").on(t.project, t.createdAt),
    uniqueIndex("messages_seq_idx").on(t.seq),
    check("messages_due_check", sql`${t.dueAt} is null or ${oneOf(t.state, PENDING_STATES)}`),
    check(
      "messages_pending_queue_check",
      sql`${t.pendingQueue} is null or (${t.pendingQueue} = ${t.queueName} and ${oneOf(t.state, PENDING_STATES)})`,
    ),
    // No index may name `state` or `completed_at`: the delivered update must stay HOT.
    // The claim reads each project's due messages apart (claim-messages.ts: projects are served in turn).
    index("messages_due_idx").on(t.project, t.dueAt).where(sql`${t.dueAt} is not null`),
    index("messages_pending_queue_idx")
      .on(t.project, t.pendingQueue, t.queueStarted, t.seq)
      .where(sql`${t.pendingQueue} is not null`),
    check(
      "messages_flow_parked_check",
      sql`not ${t.flowParked} or (${t.flowControlKey} is not null and ${t.dueAt} is null and ${oneOf(t.state, PENDING_STATES)})`,
    ),
    index("messages_flow_active_idx").on(t.project, t.flowControlKey).where(sql`${t.flowActive}`),
    index("messages_flow_parked_idx").on(t.project, t.flowControlKey, t.seq).where(sql`${t.flowParked}`),
    check(
      "messages_destination_parked_check",
      sql`not ${t.destinationParked} or (${t.destination} is not null and ${t.dueAt} is null and ${t.claimId} is null and not ${t.flowParked} and ${oneOf(t.state, PENDING_STATES)})`,
    ),
    index("messages_destination_parked_idx").on(t.destination, t.nextDeliveryAt).where(sql`${t.destinationParked}`),
    index("messages_flow_control_key_idx").on(t.project, t.flowControlKey).where(sql`${t.flowControlKey} is not null`),
    uniqueIndex("messages_canceled_seq_idx").on(t.canceledSeq).where(sql`${t.canceledSeq} is not null`),
    index("messages_source_message_id_idx").on(t.sourceMessageId).where(sql`${t.sourceMessageId} is not null`),
    index("messages_workflow_run_pk_idx").on(t.workflowRunPk).where(sql`${t.workflowRunPk} is not null`),
    index("messages_retried_at_idx").on(t.project, t.retriedAt).where(sql`${t.retriedAs} is not null`),
  ],
);

/**
 * The event log as it was written before the attempt log (one row per state
 * change); read-only, kept so that the audit trail of older messages stays
 * complete. `dispatch.message_events` lists its rows first.
 */
export const messageEventsLegacy = dispatch.table(
  "message_events_legacy",
  {
    id: bigint("id", { mode: "number" }).primaryKey(),
    messageId: text("message_id").notNull(),
    state: text("state").$type<EventState>().notNull(),
    at: timestamptz("at").notNull().default(sql`now()`),
    error: text("error"),
    responseStatus: integer("response_status"),
    responseHeaders: jsonb("response_headers").$type<Record<string, string[]>>(),
    responseBody: bytea("response_body"),
    nextDeliveryAt: timestamptz("next_delivery_at"),
  },
  (t) => [
    check("message_events_legacy_state_check", oneOf(t.state, EVENT_STATES)),
    index("message_events_legacy_message_id_idx").on(t.messageId, t.id),
  ],
);

/**
 * The attempt log: one row per delivery attempt, written with its outcome.
 * With the message row it is the whole audit trail; the view
 * `dispatch.message_events` (sql/migrations/0006) spells both out as the
 * events the logs API lists — CREATED from the message, ACTIVE and
 * DELIVERED/ERROR from each attempt, RETRY, FAILED and notes from the attempt
 * that led to them, the cancellation from the message. Ids come from the
 * messages' `seq` sequence, so attempts and messages interleave in the order
 * they were written.
 */
export const attempts = dispatch.table(
  "attempts",
  {
    id: bigint("id", { mode: "number" }).primaryKey().default(sql`nextval('dispatch.messages_seq_seq')`),
    /** The message's project is the attempt's: every read of attempts goes through its message. */
    messageId: text("message_id").notNull(),
    /**
     * The message's project, written with the attempt: on Citus, attempts are distributed on it beside
     * their message (docs/citus.md). Null in rows written before it (migration 0031); no plain read uses it.
     */
    project: text("project"),
    /** Retries done before this attempt (0 for the first), as sent in the Retried header. */
    retried: integer("retried").notNull(),
    startedAt: timestamptz("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    /** When the outcome was written: the time of the events after ACTIVE. */
    recordedAt: timestamptz("recorded_at").notNull().default(sql`now()`),
    result: text("result").$type<AttemptResult>().notNull(),
    responseStatus: integer("response_status"),
    /** Response headers and body (capped at the message size limit), kept for unsuccessful attempts. */
    responseHeaders: jsonb("response_headers").$type<Record<string, string[]>>(),
    responseBody: bytea("response_body"),
    error: text("error"),
    /** When the retry this attempt led to is due; null when none followed. */
    nextAttemptAt: timestamptz("next_attempt_at"),
    /** Why this attempt failed the message for good; null when it did not. */
    failure: text("failure"),
    /** A problem after the attempt, such as a callback that could not be sent. */
    note: text("note"),
  },
  (t) => [
    check("attempts_result_check", oneOf(t.result, ATTEMPT_RESULTS)),
    check("attempts_duration_check", sql`${t.durationMs} >= 0 and ${t.retried} >= 0`),
    index("attempts_message_id_idx").on(t.messageId, t.id),
  ],
);

/** Dead letter queue: messages whose retries are exhausted, with the last response. */
export const dlq = dispatch.table(
  "dlq",
  {
    dlqId: text("dlq_id").primaryKey(),
    project: project(),
    messageId: text("message_id")
      .notNull()
      .unique()
      .references(() => messages.id),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    error: text("error"),
    responseStatus: integer("response_status"),
    responseHeaders: jsonb("response_headers").$type<Record<string, string[]>>(),
    responseBody: bytea("response_body"),
  },
  (t) => [index("dlq_project_created_at_idx").on(t.project, t.createdAt)],
);

/**
 * Deduplication windows. A key is live while `expires_at` is in the future; the
 * primary key makes concurrent identical publishes race on one row.
 */
export const deduplicationKeys = dispatch.table(
  "deduplication_keys",
  {
    key: text("key").notNull(),
    project: project(),
    messageId: text("message_id").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.project, t.key] }), index("deduplication_keys_expires_at_idx").on(t.expiresAt)],
);

/** Service settings made on first start: generated access tokens and signing keys. */
export const settings = dispatch.table("settings", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: timestamptz("updated_at").notNull().default(sql`now()`),
});

/**
 * Access tokens operators made with `dispatch token create`, accepted beside
 * the configured (or generated) ones. Only a token's sha256 digest is kept;
 * the token itself is shown once, when it is made. Revoking deletes the row.
 */
export const accessTokens = dispatch.table(
  "access_tokens",
  {
    /** The operator's handle for the token (domain/access-tokens/access-tokens.ts `checkTokenName`). */
    name: text("name").primaryKey(),
    project: ownedBy(),
    digest: bytea("digest").notNull(),
    /** A read-only token calls only the operations declared `read` (http/openapi/operation.ts). */
    readOnly: boolean("read_only").notNull(),
    /**
     * The `UserID` inside the token (domain/secrets/stored-secrets.ts `generateAccessToken`), which the workflow SDK puts
     * in its webhook URLs (docs/workflow-protocol.md §7.5); not a secret. Null for tokens made before it was kept.
     */
    userId: text("user_id"),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
  },
  // A sha256 digest, never the token: a token is longer than 32 bytes.
  (t) => [check("access_tokens_digest_check", sql`octet_length(${t.digest}) = 32`)],
);

/**
 * When each access token was last used, by its sha256 digest: configured,
 * generated and stored tokens alike (domain/access-tokens/token-uses.ts),
 * for `dispatch token list`. Written at most once a minute per token by each
 * API process, never on a request's path.
 */
export const accessTokenUses = dispatch.table(
  "access_token_uses",
  {
    digest: bytea("digest").primaryKey(),
    lastUsedAt: timestamptz("last_used_at").notNull(),
  },
  (t) => [check("access_token_uses_digest_check", sql`octet_length(${t.digest}) = 32`)],
);

/**
 * Dashboard sessions (http/dashboard/session/session.ts): the cookie holds a random
 * id, the row only its HMAC under the session key (derived from
 * DISPATCH_SECRET), so that a copy of this table cannot make a cookie.
 * Signing out deletes the row; one idle longer than DISPATCH_SESSION_IDLE,
 * or past its end, is refused and removed at the next sign-in.
 */
export const dashboardSessions = dispatch.table(
  "dashboard_sessions",
  {
    idDigest: bytea("id_digest").primaryKey(),
    /** The sha256 digest of the token signed in with: its session ends when the token is no longer accepted. */
    tokenDigest: bytea("token_digest").notNull(),
    role: text("role").notNull(),
    /** The project an admin session (DISPATCH_ADMIN_TOKEN) looks at; null: the default project. */
    project: text("project").references(() => projects.name, { onDelete: "set null" }),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    /** Moved on at most once a minute by the requests of the session. */
    lastSeenAt: timestamptz("last_seen_at").notNull().default(sql`now()`),
    expiresAt: timestamptz("expires_at").notNull(),
  },
  (t) => [
    check("dashboard_sessions_role_check", sql`${t.role} in ('full', 'readonly')`),
    check("dashboard_sessions_digest_check", sql`octet_length(${t.idDigest}) = 32 and octet_length(${t.tokenDigest}) = 32`),
  ],
);

/**
 * Attempts in flight, one row per claim (a batch of messages a worker took).
 * A claim lives while its worker beats its heartbeat in `dispatch.workers`;
 * the claims of a dead worker are swept and their messages become due again.
 */
export const claims = dispatch.table("claims", {
  id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
  /**
   * The project of the claim's messages when they are all of one: always on Citus, where claims are
   * distributed on it beside the messages (docs/citus.md); null for a claim of the one-server statement,
   * which takes several projects' messages at once.
   */
  project: text("project"),
  workerId: text("worker_id").notNull(),
  messageIds: text("message_ids").array().notNull(),
  claimedAt: timestamptz("claimed_at").notNull().default(sql`now()`),
});

/** Liveness of the engine's lock holders, so the jobs of a dead process are released. */
export const workers = dispatch.table("workers", {
  id: text("id").primaryKey(),
  processId: text("process_id").notNull(),
  heartbeatAt: timestamptz("heartbeat_at").notNull().default(sql`now()`),
});

/** Queues: ordered delivery with bounded parallelism; can be paused. */
export const queues = dispatch.table(
  "queues",
  {
    name: text("name").notNull(),
    project: ownedBy(),
    parallelism: integer("parallelism").notNull().default(1),
    paused: boolean("paused").notNull().default(false),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    updatedAt: timestamptz("updated_at").notNull().default(sql`now()`),
  },
  (t) => [primaryKey({ columns: [t.project, t.name] }), check("queues_parallelism_check", sql`${t.parallelism} >= 1`)],
);

/**
 * Cron schedules: a stored publish request (destination, publish headers,
 * body, queue) that is published once per tick of `cron`. `next_tick_at` is
 * the tick the schedule waits for; the worker that fires it moves it on in the
 * same transaction, so each tick fires once across replicas.
 */
export const schedules = dispatch.table(
  "schedules",
  {
    /** Given or generated; unique within its project. */
    id: text("id").notNull(),
    project: ownedBy(),
    /** As given, trimmed, with its optional `CRON_TZ=<zone>` prefix. */
    cron: text("cron").notNull(),
    /** A URL, a URL group name or `api/llm`. */
    destination: text("destination").notNull(),
    dialect: text("dialect").$type<Dialect>().notNull(),
    /** The publish headers of the request (lower-case names), without credentials or the schedule's own. */
    headers: jsonb("headers").$type<Record<string, string>>().notNull(),
    body: bytea("body").notNull(),
    queueName: text("queue_name"),
    callerIp: text("caller_ip"),
    paused: boolean("paused").notNull().default(false),
    nextTickAt: timestamptz("next_tick_at").notNull(),
    lastTickAt: timestamptz("last_tick_at"),
    /** Messages produced by the last tick. */
    lastMessageIds: text("last_message_ids").array().notNull().default(sql`'{}'`),
    /** Why the last tick produced nothing (e.g. its URL group was deleted); null when it did. */
    lastError: text("last_error"),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    updatedAt: timestamptz("updated_at").notNull().default(sql`now()`),
  },
  (t) => [
    check("schedules_dialect_check", oneOf(t.dialect, DIALECTS)),
    primaryKey({ columns: [t.project, t.id] }),
    index("schedules_next_tick_idx").on(t.nextTickAt).where(sql`not ${t.paused}`),
  ],
);

/**
 * Flow-control keys (docs/hosted-api.md §11): the limits in force for each key
 * (those of its latest message, unless pinned), whether it is paused, and
 * when its recent deliveries started, for the rate's sliding window. The row
 * lock orders every replica's admissions of the key.
 */
export const flowControlKeys = dispatch.table(
  "flow_control_keys",
  {
    /** Unique within its project: two projects' keys of one name are two keys. */
    key: text("key").notNull(),
    project: ownedBy(),
    parallelism: integer("parallelism"),
    rate: integer("rate"),
    periodMs: integer("period_ms").notNull().default(1000),
    pinnedParallelism: boolean("pinned_parallelism").notNull().default(false),
    pinnedRate: boolean("pinned_rate").notNull().default(false),
    paused: boolean("paused").notNull().default(false),
    /** Start times of the deliveries admitted within the last period (at most `rate` of them). */
    starts: timestamptz("starts").array().notNull().default(sql`'{}'`),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    updatedAt: timestamptz("updated_at").notNull().default(sql`now()`),
  },
  (t) => [
    primaryKey({ columns: [t.project, t.key] }),
    check("flow_control_keys_limits_check", sql`coalesce(${t.parallelism}, 1) >= 1 and coalesce(${t.rate}, 1) >= 1 and ${t.periodMs} >= 1000`),
  ],
);

/**
 * Destinations (an origin: scheme://host[:port]) and their health, shared by
 * every replica: a circuit breaker (domain/destinations/circuit.ts) and what
 * the last minute of attempts looked like. A row appears with a destination's
 * first attempt; each worker adds what it saw about once a second
 * (`record-destination-health.ts`), as two half-windows (current and
 * previous) that the breaker reads together.
 */
export const destinations = dispatch.table(
  "destinations",
  {
    destination: text("destination").primaryKey(),
    circuit: text("circuit").$type<CircuitState>().notNull().default("CLOSED"),
    /** Opened by hand: no probe and no give-up until it is closed by hand. */
    openedByHand: boolean("opened_by_hand").notNull().default(false),
    openedAt: timestamptz("opened_at"),
    /** What opened it, in words ("12 timeouts and 3 × 503 in the last minute"). */
    openReason: text("open_reason"),
    /** The cool-down before the next probe; doubles with each failed probe. */
    coolDownMs: integer("cool_down_ms"),
    /** When an OPEN circuit's next probe may start. */
    probeAt: timestamptz("probe_at"),
    /** The message a PROBING circuit is trying, and when the probe counts as lost. */
    probeMessageId: text("probe_message_id"),
    probeDeadline: timestamptz("probe_deadline"),
    /** A 429's Retry-After holds the whole destination until then. */
    heldUntil: timestamptz("held_until"),
    windowStartedAt: timestamptz("window_started_at").notNull().default(sql`now()`),
    attempts: integer("attempts").notNull().default(0),
    failures: integer("failures").notNull().default(0),
    /** Failures by kind (`timeout`, `refused`, `status 503`, ...): counts. */
    failureKinds: jsonb("failure_kinds").$type<Record<string, number>>().notNull().default(sql`'{}'`),
    /** Distinct messages whose attempts failed (at most a few are kept: the breaker counts to its threshold). */
    failingMessages: text("failing_messages").array().notNull().default(sql`'{}'`),
    latencyMsTotal: bigint("latency_ms_total", { mode: "number" }).notNull().default(0),
    previousAttempts: integer("previous_attempts").notNull().default(0),
    previousFailures: integer("previous_failures").notNull().default(0),
    previousFailureKinds: jsonb("previous_failure_kinds").$type<Record<string, number>>().notNull().default(sql`'{}'`),
    previousFailingMessages: text("previous_failing_messages").array().notNull().default(sql`'{}'`),
    previousLatencyMsTotal: bigint("previous_latency_ms_total", { mode: "number" }).notNull().default(0),
    lastError: text("last_error"),
    lastStatus: integer("last_status"),
    lastErrorAt: timestamptz("last_error_at"),
    lastSuccessAt: timestamptz("last_success_at"),
    lastAttemptAt: timestamptz("last_attempt_at"),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    updatedAt: timestamptz("updated_at").notNull().default(sql`now()`),
  },
  (t) => [
    check("destinations_circuit_check", oneOf(t.circuit, CIRCUIT_STATES)),
    check("destinations_opened_check", sql`(${t.circuit} = 'CLOSED') = (${t.openedAt} is null)`),
    check("destinations_probe_check", sql`(${t.circuit} = 'PROBING') = (${t.probeMessageId} is not null)`),
    // The claim reads the destinations that hold their messages back through this index: a handful of rows.
    index("destinations_holding_idx").on(t.destination).where(sql`${t.circuit} <> 'CLOSED' or ${t.heldUntil} is not null`),
    index("destinations_last_attempt_at_idx").on(t.lastAttemptAt),
  ],
);

/** URL groups (topics): a named set of endpoints a publish fans out to. */
export const urlGroups = dispatch.table(
  "url_groups",
  {
    name: text("name").notNull(),
    project: ownedBy(),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    updatedAt: timestamptz("updated_at").notNull().default(sql`now()`),
  },
  (t) => [primaryKey({ columns: [t.project, t.name] })],
);

/** Endpoints of a URL group, identified by URL; the name is an optional label. */
export const urlGroupEndpoints = dispatch.table(
  "url_group_endpoints",
  {
    groupName: text("group_name").notNull(),
    url: text("url").notNull(),
    /** The group's project: deleting the group (or its project) deletes its endpoints. */
    project: project(),
    name: text("name"),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
  },
  (t) => [
    primaryKey({ columns: [t.project, t.groupName, t.url] }),
    foreignKey({ name: "url_group_endpoints_group_fk", columns: [t.project, t.groupName], foreignColumns: [urlGroups.project, urlGroups.name] })
      .onDelete("cascade"),
  ],
);

/**
 * Workflow runs. A run id may be reused once its run has ended, so runs are
 * keyed by `pk`; at most one run per id is active (partial unique index).
 * Run-level configuration from the init message applies to every later
 * message of the run (docs/workflow-protocol.md §2.2, §2.4 WF_TriggerOnConfig).
 */
export const workflowRuns = dispatch.table(
  "workflow_runs",
  {
    pk: bigint("pk", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    runId: text("run_id").notNull(),
    project: project(),
    workflowUrl: text("workflow_url").notNull(),
    dialect: text("dialect").$type<Dialect>().notNull(),
    state: text("state").$type<RunState>().notNull().default("RUN_STARTED"),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
    completedAt: timestamptz("completed_at"),
    /** Run configuration (retries, retry delay, timeout, failure callback, flow control) applied to every message of the run. */
    config: jsonb("config").$type<Record<string, unknown>>().notNull(),
    /** Forwarded user headers of the init message, added to every delivery to the workflow URL. */
    userHeaders: jsonb("user_headers").$type<Record<string, string>>().notNull(),
    labels: text("labels").array(),
    featureSet: text("feature_set"),
    callerIp: text("caller_ip"),
    /**
     * The W3C trace context every step's attempt is a child span of (observability/tracing.ts):
     * the trace of the message that started the run; null when tracing was off.
     */
    traceparent: text("traceparent"),
    /** The parent run and step that invoked this run, and how to address the parent. */
    invoker: jsonb("invoker"),
    /** Body of `DELETE …?cancel=false`: the workflow's return value. */
    response: text("response"),
    dlqId: text("dlq_id"),
    failureCallbackMessageId: text("failure_callback_message_id"),
    failureCallbackState: text("failure_callback_state").$type<FailureFunctionState>(),
    /** The failed message's response (status, headers, body) that triggered the failure function. */
    failure: jsonb("failure"),
    /** The failure function's own final response (status, headers, body). */
    failureResponse: jsonb("failure_response"),
    /** When the maintenance sweep found the run started with nothing scheduled (domain/workflows/stalled.ts). */
    stalledAt: timestamptz("stalled_at"),
  },
  (t) => [
    check("workflow_runs_state_check", oneOf(t.state, RUN_STATES)),
    check(
      "workflow_runs_failure_callback_state_check",
      sql`${t.failureCallbackState} is null or ${oneOf(t.failureCallbackState, FAILURE_FUNCTION_STATES)}`,
    ),
    check("workflow_runs_dialect_check", oneOf(t.dialect, DIALECTS)),
    check("workflow_runs_completed_check", sql`(${t.state} = 'RUN_STARTED') = (${t.completedAt} is null)`),
    // A run id is unique among a project's active runs; two projects may each run one of the same id.
    uniqueIndex("workflow_runs_active_idx").on(t.project, t.runId).where(sql`${t.state} = 'RUN_STARTED'`),
    index("workflow_runs_run_id_idx").on(t.project, t.runId, t.createdAt),
    index("workflow_runs_created_at_idx").on(t.project, t.createdAt),
    // A DLQ entry's run (the workflow DLQ, and a plain DLQ retry telling a run's failed step from a message).
    index("workflow_runs_dlq_idx").on(t.dlqId).where(sql`${t.dlqId} is not null`),
  ],
);

/**
 * The ordered step list of a run (docs/workflow-protocol.md §2.3): every message
 * of the run in creation order. A delivery to the workflow URL carries the
 * list up to and including its own entry.
 */
export const workflowSteps = dispatch.table(
  "workflow_steps",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    runPk: bigint("run_pk", { mode: "number" })
      .notNull()
      .references(() => workflowRuns.pk, { onDelete: "cascade" }),
    /** The run's project: on Citus, steps are distributed on it beside their run (docs/citus.md); null in rows before migration 0031. */
    project: text("project"),
    messageId: text("message_id").notNull(),
    callType: text("call_type").$type<WorkflowCallType>().notNull(),
    body: bytea("body").notNull(),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
  },
  (t) => [
    check("workflow_steps_call_type_check", oneOf(t.callType, WORKFLOW_CALL_TYPES)),
    index("workflow_steps_run_idx").on(t.runPk, t.seq),
    index("workflow_steps_message_idx").on(t.messageId),
  ],
);

/** Runs waiting for an event (`context.waitForEvent`, `waitForWebhook`). */
export const workflowWaiters = dispatch.table(
  "workflow_waiters",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    runPk: bigint("run_pk", { mode: "number" })
      .notNull()
      .references(() => workflowRuns.pk, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    project: project(),
    url: text("url").notNull(),
    /** Publish headers of the continuation message on notify. */
    headers: jsonb("headers").$type<Record<string, string>>().notNull(),
    timeoutUrl: text("timeout_url").notNull(),
    timeoutHeaders: jsonb("timeout_headers").$type<Record<string, string>>().notNull(),
    /** The wait request's `timeoutBody`, shown on the waiter as given (the timeout still delivers the step). */
    timeoutBody: text("timeout_body"),
    timeout: text("timeout").notNull(),
    step: jsonb("step").$type<Record<string, unknown>>().notNull(),
    deadline: timestamptz("deadline").notNull(),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
  },
  (t) => [index("workflow_waiters_event_idx").on(t.project, t.eventId), index("workflow_waiters_run_idx").on(t.runPk)],
);

/** Notifications for a run that arrived before its wait ("lookback" notify). */
export const workflowNotifications = dispatch.table(
  "workflow_notifications",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    runId: text("run_id").notNull(),
    project: project(),
    eventId: text("event_id").notNull(),
    body: bytea("body").notNull(),
    createdAt: timestamptz("created_at").notNull().default(sql`now()`),
  },
  (t) => [index("workflow_notifications_idx").on(t.project, t.runId, t.eventId)],
);
