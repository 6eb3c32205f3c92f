/**
 * Configuration from the environment, parsed once at start.
 *
 * Every variable is documented in the README. A bad value stops the service
 * with a message naming the variable, never with a stack trace.
 */
import * as v from "valibot";
import { DIALECTS, type Dialect } from "../db/vocabulary";
import { parseDuration } from "../domain/duration";
import { LOG_LEVELS, type LogLevel } from "../observability/log";
import { asQstashDev, qstashDevProblems } from "./qstash-dev";
import { parseTracingConfig, type TracingConfig } from "./tracing-config";

/** The service's typed configuration. */
export interface Config {
  port: number;
  /** Where the API listens; null: 127.0.0.1 with the embedded database, 0.0.0.0 with a configured one. */
  host: string | null;
  /** External database; when absent an embedded Postgres is started in `dataDir`. */
  databaseUrl: string | null;
  /**
   * A direct (session) connection to the same database, for migrations, LISTEN and graphile-worker,
   * when `databaseUrl` goes through a transaction-mode pooler.
   */
  databaseDirectUrl: string | null;
  /** The app pool's size (connections to DATABASE_URL). */
  databasePoolSize: number;
  /** Whether `dispatch start` (and the commands but `migrate`) apply pending migrations first. */
  migrate: boolean;
  /**
   * Whether a process running both roles stores immediate messages already
   * claimed by its own worker and attempts them at once (domain/publish/local-delivery.ts).
   */
  deliverFromPublish: boolean;
  /**
   * The dialect of a publish with neither `Svc-` nor `Upstash-` headers, and
   * the dashboard's choice for its Publish page and schedule form: `upstash`
   * where receivers verify with the official SDKs' Receiver.
   */
  defaultDialect: Dialect;
  /** The official SDKs' development server (qstash-dev.ts): their token and keys, embedded and loopback only. */
  qstashDev: boolean;
  /** Check every JSON answer against the API document and log a mismatch as an internal error (development; the tests). */
  checkAnswers: boolean;
  dataDir: string;
  /** Access tokens from configuration; when empty one is generated and stored. */
  tokens: string[];
  /** Read-only tokens: they read everything a full token reads but the signing keys, and change nothing. */
  readonlyTokens: string[];
  /** A token that may read `/metrics` only (any access token may too). */
  metricsToken: string | null;
  /** DISPATCH_ADMIN_TOKEN: the token of the projects' administration API (`/admin/projects`); none when null. */
  adminToken: string | null;
  /** OpenTelemetry tracing, from the standard OTEL_* variables (tracing-config.ts); null: off. */
  tracing: TracingConfig | null;
  currentSigningKey: string | null;
  nextSigningKey: string | null;
  /**
   * The key-encryption secret stored secrets are sealed with and dashboard
   * sessions are bound to (domain/secrets/secret-box.ts); with the embedded
   * database, one is made and kept in the data folder when this is null.
   */
  secret: string | null;
  /** A dashboard session with no request for this long ends (DISPATCH_SESSION_IDLE). */
  sessionIdleMs: number;
  /** Failed authentications (API 401s, refused sign-ins) an address may have in a minute before 429s; 0: no limit. */
  authFailureLimit: number;
  allowPrivateNetworks: boolean;
  maxMessageBytes: number;
  deduplicationWindowMs: number;
  defaultRetries: number;
  maxRetries: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  maxDelayMs: number;
  /** Highest parallelism a queue may be given. */
  maxQueueParallelism: number;
  /** Lines below this level are not logged. */
  logLevel: LogLevel;
  /** How long finished messages (with their attempts and log) are kept. */
  retentionMs: number;
  /** How long DLQ entries are kept (their messages stay as long). */
  dlqRetentionMs: number;
  /** How long finished workflow runs (with their steps and messages) are kept. */
  workflowRetentionMs: number;
  /** Share of the time the maintenance task's removal works (0 < pace ≤ 1): its rate against its load. */
  retentionPace: number;
  /** Multiplies every retry backoff; tests use a small value instead of sleeping. */
  retryDelayScale: number;
  /** Multiplies the wait before a first attempt (Delay, Not-Before, Callback-Delay, workflow sleeps); for tests. */
  delayScale: number;
  workerConcurrency: number;
  /** Share of a worker's slots one destination may hold while it is slow or unproven (worker/destination-slots.ts). */
  destinationShare: number;
  /** A circuit opens after this many failed attempts in the last minute (domain/destinations/circuit.ts)... */
  circuitFailures: number;
  /** ...that are at least this share of the attempts. */
  circuitFailureRate: number;
  /** The first wait of an open circuit before its probe; it doubles with each failed probe, up to the maximum. */
  circuitCoolDownMs: number;
  circuitMaxCoolDownMs: number;
  /** A circuit open this long gives up: its messages are attempted again and run out their own retries. */
  circuitGiveUpAfterMs: number;
  /** Where operator events (circuits, the DLQ's threshold) are sent; none when null. */
  operatorEventsUrl: string | null;
  /** The DLQ size past which an operator event is sent (once, until it is back under). */
  operatorDlqThreshold: number;
  /**
   * How often a worker with work looks for due messages; the wait after each look that found nothing doubles
   * from here up to `idlePollIntervalMs` (claimer.ts).
   */
  pollIntervalMs: number;
  /**
   * The longest an idle worker waits between looks for due messages. Due times it knows of wake it sooner:
   * the next one on the work list, and those writers announce (work-list.ts).
   */
  idlePollIntervalMs: number;
  /** How long a worker process may miss heartbeats before its jobs are released. */
  workerDeadAfterMs: number;
  heartbeatIntervalMs: number;
  /** Public base URL printed at start (defaults to http://localhost:PORT). */
  baseUrl: string | null;
  /** OpenAI-compatible API base (e.g. https://api.openai.com/v1) that `api/llm` messages go to. */
  llmBaseUrl: string | null;
  llmApiKey: string | null;
}

/**
 * Share of the time retention's removal (worker/maintenance/retention.ts) works by default (DISPATCH_RETENTION_PACE): after a batch that took t,
 * it rests t × (1 − pace) / pace. At a tenth it removed 1,900 messages a second beside the bench's
 * full load (scenario 10), taking nothing measurable from publishing and delivery.
 */
export const DEFAULT_RETENTION_PACE = 0.1;

const duration = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.transform((text) => parseDuration(text)),
    v.number("must be a duration such as 30s, 5m, 2h or 1d"),
  );

/** A comma-separated list of access tokens. */
const tokenList = v.pipe(
  v.optional(v.string(), ""),
  v.transform((text) => text.split(",").map((token) => token.trim()).filter(Boolean)),
  v.check((tokens) => tokens.every((token) => token.length >= 16), "each token must have at least 16 characters"),
);

const integer = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

const decimal = (fallback: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d+(\.\d+)?$/, "must be a non-negative number"),
    v.transform(Number),
  );

const flag = v.pipe(
  v.optional(v.picklist(["true", "false", "1", "0", ""], "must be true or false"), "false"),
  v.transform((text) => text === "true" || text === "1"),
);
/** A setting that is on unless set to `false` (or `0`). */
const trueUnlessFalse = v.pipe(
  v.optional(v.picklist(["true", "false", "1", "0", ""], "must be true or false"), "true"),
  v.transform((text) => text !== "false" && text !== "0"),
);

const optionalText = v.pipe(
  v.optional(v.string(), ""),
  v.transform((text) => (text.trim() === "" ? null : text.trim())),
);

/** An optional secret of at least `min` characters (anything shorter is guessable). */
function secretText(min: number) {
  return v.pipe(
    optionalText,
    v.check((text) => text === null || text.length >= min, `must be at least ${min} characters (e.g. openssl rand -base64 ${Math.max(24, min)})`),
  );
}

const EnvSchema = v.object({
  PORT: integer(8080, 0, 65535),
  HOST: optionalText,
  DATABASE_URL: v.pipe(
    optionalText,
    v.check((url) => url === null || /^postgres(ql)?:\/\//.test(url), "must be a postgres:// URL"),
  ),
  DATABASE_DIRECT_URL: v.pipe(
    optionalText,
    v.check((url) => url === null || /^postgres(ql)?:\/\//.test(url), "must be a postgres:// URL"),
  ),
  DISPATCH_DATABASE_POOL_SIZE: integer(20, 2, 1000),
  DISPATCH_MIGRATE: trueUnlessFalse,
  DISPATCH_DELIVER_FROM_PUBLISH: trueUnlessFalse,
  DISPATCH_DATA_DIR: v.optional(v.string(), ".dispatch"),
  DISPATCH_DEFAULT_DIALECT: v.optional(v.picklist(DIALECTS, `must be one of ${DIALECTS.join(", ")}`), "svc"),
  DISPATCH_CHECK_ANSWERS: flag,
  DISPATCH_QSTASH_DEV: flag,
  DISPATCH_TOKEN: tokenList,
  DISPATCH_READONLY_TOKEN: tokenList,
  DISPATCH_METRICS_TOKEN: secretText(16),
  DISPATCH_ADMIN_TOKEN: secretText(16),
  DISPATCH_CURRENT_SIGNING_KEY: secretText(32),
  DISPATCH_NEXT_SIGNING_KEY: secretText(32),
  DISPATCH_SECRET: secretText(32),
  DISPATCH_SESSION_IDLE: duration("1h"),
  DISPATCH_AUTH_FAILURE_LIMIT: integer(30, 0, 1_000_000),
  DISPATCH_ALLOW_PRIVATE_NETWORKS: flag,
  DISPATCH_MAX_MESSAGE_SIZE: integer(1_048_576, 1024, 100 * 1_048_576),
  DISPATCH_DEDUPLICATION_WINDOW: duration("10m"),
  DISPATCH_DEFAULT_RETRIES: integer(3, 0, 100),
  DISPATCH_MAX_RETRIES: integer(20, 0, 100),
  DISPATCH_DEFAULT_TIMEOUT: duration("15m"),
  DISPATCH_MAX_TIMEOUT: duration("15m"),
  DISPATCH_MAX_DELAY: duration("365d"),
  DISPATCH_MAX_QUEUE_PARALLELISM: integer(1000, 1, 1_000_000),
  DISPATCH_LOG_LEVEL: v.optional(v.picklist(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(", ")}`), "info"),
  DISPATCH_RETENTION: duration("14d"),
  DISPATCH_DLQ_RETENTION: duration("30d"),
  DISPATCH_WORKFLOW_RETENTION: duration("14d"),
  DISPATCH_RETENTION_PACE: v.pipe(
    decimal(DEFAULT_RETENTION_PACE),
    v.check((pace) => pace > 0 && pace <= 1, "must be above 0 and at most 1 (the share of the time removal works)"),
  ),
  DISPATCH_RETRY_DELAY_SCALE: decimal(1),
  DISPATCH_DELAY_SCALE: decimal(1),
  DISPATCH_WORKER_CONCURRENCY: integer(256, 1, 10_000),
  DISPATCH_DESTINATION_SHARE: v.pipe(
    decimal(0.25),
    v.check((share) => share > 0 && share <= 1, "must be above 0 and at most 1 (the share of a worker's slots)"),
  ),
  DISPATCH_CIRCUIT_FAILURES: integer(10, 1, 1_000_000),
  DISPATCH_CIRCUIT_FAILURE_RATE: v.pipe(
    decimal(0.5),
    v.check((rate) => rate > 0 && rate <= 1, "must be above 0 and at most 1 (the share of attempts that failed)"),
  ),
  DISPATCH_CIRCUIT_COOL_DOWN: duration("30s"),
  DISPATCH_CIRCUIT_MAX_COOL_DOWN: duration("10m"),
  DISPATCH_CIRCUIT_GIVE_UP_AFTER: duration("1h"),
  DISPATCH_OPERATOR_EVENTS_URL: v.pipe(
    optionalText,
    v.check((url) => url === null || /^https?:\/\/[^/]/.test(url), "must be an http(s) URL"),
  ),
  DISPATCH_OPERATOR_DLQ_THRESHOLD: integer(1000, 1, 1_000_000_000),
  DISPATCH_POLL_INTERVAL_MS: integer(50, 10, 60_000),
  DISPATCH_IDLE_POLL_INTERVAL: duration("1s"),
  DISPATCH_WORKER_DEAD_AFTER: duration("6s"),
  DISPATCH_HEARTBEAT_INTERVAL: duration("1s"),
  DISPATCH_BASE_URL: optionalText,
  DISPATCH_LLM_BASE_URL: v.pipe(
    optionalText,
    v.check((url) => url === null || /^https?:\/\/[^/]/.test(url), "must be an http(s) URL"),
  ),
  DISPATCH_LLM_API_KEY: optionalText,
});

/** Thrown when the environment holds a bad value; the message names every bad variable. */
export class ConfigError extends Error {}

/** Parses the environment into a `Config`, or throws `ConfigError` listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = v.safeParse(EnvSchema, env);
  if (!result.success) {
    const problems = result.issues.map((issue) => {
      const name = issue.path?.map((item) => String(item.key)).join(".") ?? "environment";
      return `${name} ${issue.message} (got ${JSON.stringify(issue.input)})`;
    });
    throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const e = result.output;
  const tracingProblems: string[] = [];
  const tracing = parseTracingConfig(env, tracingProblems);
  if (tracingProblems.length > 0) throw new ConfigError(`invalid configuration:\n  ${tracingProblems.join("\n  ")}`);
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    databasePoolSize: e.DISPATCH_DATABASE_POOL_SIZE,
    migrate: e.DISPATCH_MIGRATE,
    deliverFromPublish: e.DISPATCH_DELIVER_FROM_PUBLISH,
    defaultDialect: e.DISPATCH_DEFAULT_DIALECT,
    qstashDev: e.DISPATCH_QSTASH_DEV,
    checkAnswers: e.DISPATCH_CHECK_ANSWERS,
    dataDir: e.DISPATCH_DATA_DIR,
    tokens: e.DISPATCH_TOKEN,
    readonlyTokens: e.DISPATCH_READONLY_TOKEN,
    metricsToken: e.DISPATCH_METRICS_TOKEN,
    adminToken: e.DISPATCH_ADMIN_TOKEN,
    tracing,
    currentSigningKey: e.DISPATCH_CURRENT_SIGNING_KEY,
    secret: e.DISPATCH_SECRET,
    sessionIdleMs: e.DISPATCH_SESSION_IDLE,
    authFailureLimit: e.DISPATCH_AUTH_FAILURE_LIMIT,
    nextSigningKey: e.DISPATCH_NEXT_SIGNING_KEY,
    allowPrivateNetworks: e.DISPATCH_ALLOW_PRIVATE_NETWORKS,
    maxMessageBytes: e.DISPATCH_MAX_MESSAGE_SIZE,
    deduplicationWindowMs: e.DISPATCH_DEDUPLICATION_WINDOW,
    defaultRetries: e.DISPATCH_DEFAULT_RETRIES,
    maxRetries: e.DISPATCH_MAX_RETRIES,
    defaultTimeoutMs: e.DISPATCH_DEFAULT_TIMEOUT,
    maxTimeoutMs: e.DISPATCH_MAX_TIMEOUT,
    maxDelayMs: e.DISPATCH_MAX_DELAY,
    maxQueueParallelism: e.DISPATCH_MAX_QUEUE_PARALLELISM,
    logLevel: e.DISPATCH_LOG_LEVEL,
    retentionMs: e.DISPATCH_RETENTION,
    dlqRetentionMs: e.DISPATCH_DLQ_RETENTION,
    workflowRetentionMs: e.DISPATCH_WORKFLOW_RETENTION,
    retentionPace: e.DISPATCH_RETENTION_PACE,
    retryDelayScale: e.DISPATCH_RETRY_DELAY_SCALE,
    delayScale: e.DISPATCH_DELAY_SCALE,
    workerConcurrency: e.DISPATCH_WORKER_CONCURRENCY,
    destinationShare: e.DISPATCH_DESTINATION_SHARE,
    circuitFailures: e.DISPATCH_CIRCUIT_FAILURES,
    circuitFailureRate: e.DISPATCH_CIRCUIT_FAILURE_RATE,
    circuitCoolDownMs: e.DISPATCH_CIRCUIT_COOL_DOWN,
    circuitMaxCoolDownMs: e.DISPATCH_CIRCUIT_MAX_COOL_DOWN,
    circuitGiveUpAfterMs: e.DISPATCH_CIRCUIT_GIVE_UP_AFTER,
    operatorEventsUrl: e.DISPATCH_OPERATOR_EVENTS_URL,
    operatorDlqThreshold: e.DISPATCH_OPERATOR_DLQ_THRESHOLD,
    pollIntervalMs: e.DISPATCH_POLL_INTERVAL_MS,
    idlePollIntervalMs: Math.max(e.DISPATCH_IDLE_POLL_INTERVAL, e.DISPATCH_POLL_INTERVAL_MS),
    workerDeadAfterMs: e.DISPATCH_WORKER_DEAD_AFTER,
    heartbeatIntervalMs: e.DISPATCH_HEARTBEAT_INTERVAL,
    baseUrl: e.DISPATCH_BASE_URL,
    llmBaseUrl: e.DISPATCH_LLM_BASE_URL,
    llmApiKey: e.DISPATCH_LLM_API_KEY,
  };
  return checkConsistency(config);
}

function checkConsistency(config: Config): Config {
  const problems: string[] = [];
  if (config.defaultRetries > config.maxRetries) problems.push("DISPATCH_DEFAULT_RETRIES exceeds DISPATCH_MAX_RETRIES");
  if (config.defaultTimeoutMs > config.maxTimeoutMs) problems.push("DISPATCH_DEFAULT_TIMEOUT exceeds DISPATCH_MAX_TIMEOUT");
  if ((config.currentSigningKey === null) !== (config.nextSigningKey === null)) {
    problems.push("DISPATCH_CURRENT_SIGNING_KEY and DISPATCH_NEXT_SIGNING_KEY must be set together");
  }
  if (config.databaseDirectUrl !== null && config.databaseUrl === null) {
    problems.push("DATABASE_DIRECT_URL is set without DATABASE_URL (the embedded database needs neither)");
  }
  if (config.circuitCoolDownMs > config.circuitMaxCoolDownMs) {
    problems.push("DISPATCH_CIRCUIT_COOL_DOWN exceeds DISPATCH_CIRCUIT_MAX_COOL_DOWN");
  }
  if (config.readonlyTokens.some((token) => config.tokens.includes(token))) {
    problems.push("a token is in both DISPATCH_TOKEN and DISPATCH_READONLY_TOKEN");
  }
  if (config.qstashDev) problems.push(...qstashDevProblems(config));
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  return config.qstashDev ? asQstashDev(config) : config;
}

/** The configured signing keys, when both are set. */
export function configuredKeys(config: Config): { current: string; next: string } | null {
  return config.currentSigningKey && config.nextSigningKey ? { current: config.currentSigningKey, next: config.nextSigningKey } : null;
}

/** The chat-completions URL `api/llm` messages are delivered to, if configured. */
export function llmUrl(config: Config): string | null {
  return config.llmBaseUrl === null ? null : `${config.llmBaseUrl.replace(/\/+$/, "")}/chat/completions`;
}
