/**
 * Assembles a running Dispatch: database (external or embedded), migrations,
 * settings, then the API and/or the worker. Used by the CLI and by tests.
 */
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { type Config, configuredKeys } from "./config/config";
import { createAppPool, explained, prepareDatabase, type ReadyDatabase } from "./database";
import { DatabaseAvailability } from "./db/availability";
import { createSql, type Sql } from "./db/client";
import { connectionBudget } from "./db/connection/budget";
import type { EmbeddedDatabase } from "./db/embedded/cluster";
import { fixedTokenSet, LiveTokenSet, type TokenSet } from "./domain/access-tokens/token-set";
import type { SigningKeys } from "./domain/delivery/signing";
import type { LocalDelivery } from "./domain/publish/local-delivery";
import { ensureSigningKeys } from "./domain/delivery/signing-keys";
import { Redactor } from "./domain/messages/redaction";
import type { SecretBox } from "./domain/secrets/secret-box";
import { ensureAccessTokens, ensureRedactionKey, sealStoredSecrets } from "./domain/secrets/stored-secrets";
import { installWorkflowHooks } from "./domain/workflows/hooks";
import { createApp, withResourceCase } from "./http/server/app";
import type { Log } from "./observability/log";
import { Metrics } from "./observability/metrics";
import { NO_TRACING, type Tracing } from "./observability/tracing";
import { DestinationGuard } from "./outbound/destination-guard";
import { HttpClient } from "./outbound/http-client";
import { ListenError, listenError } from "./listen-error";
import { secretBoxFor, UNSEALED_WARNING } from "./secrets";
import { startWorker, type WorkerHandle } from "./worker/worker-role";

/** Which parts a process runs; replicas can run API and workers apart. */
export type Role = "api" | "worker" | "all";

/** A started service. */
export interface Service {
  /** Base URL of the API (null for a worker-only process). */
  baseUrl: string | null;
  databaseUrl: string;
  embedded: boolean;
  tokens: string[];
  signingKeys: SigningKeys;
  /** Whether this start generated the token or the signing keys (the banner shows them then only). */
  madeSecrets: boolean;
  sql: Sql;
  /** Where publishes hand immediate messages to this process's worker (null unless it runs both roles with it on). */
  localDelivery: LocalDelivery | null;
  /** Stops accepting requests, finishes or releases in-flight deliveries, closes pools. */
  stop(): Promise<void>;
}

/** Starts Dispatch with `config` in `role`. */
export async function startService(
  config: Config,
  role: Role,
  log: Log,
  /** The clock schedules fire by (tests move it on); the system clock by default. */
  now?: () => number,
): Promise<Service> {
  installWorkflowHooks();
  const budget = connectionBudget(config.databasePoolSize, role !== "api");
  const database = await prepareDatabase(config, log, { budget, migrateFirst: config.migrate, noticeLevel: "info" });
  const { endpoints, embedded } = database;
  const sql = createAppPool(database, config.databasePoolSize);
  // Behind a transaction-mode pooler LISTEN hears nothing: it goes to the direct connection.
  const listener: Sql = endpoints.pooled ? createSql(endpoints.direct, 1) : sql;
  const pools = { sql, listener, embedded };
  try {
    return await explained(endpoints, budget, "starting", () => startParts(config, role, log, now, database, pools));
  } catch (error) {
    // A start that could not listen has stopped what it started, its pools included.
    if (!(error instanceof ListenError)) await closePools(pools);
    throw error;
  }
}

/**
 * The box the service seals stored secrets with; rows an earlier version kept
 * in plaintext are sealed now (said in one line), and a service with no
 * secret says so at each start.
 */
async function openSecrets(config: Config, database: ReadyDatabase, sql: Sql, log: Log): Promise<SecretBox> {
  const box = secretBoxFor(config, database.embedded !== null);
  if (!box.seals) log(UNSEALED_WARNING, { level: "warn" });
  const sealed = await sealStoredSecrets(sql, box);
  if (sealed > 0) log(`sealed ${sealed} stored secret${sealed === 1 ? "" : "s"} an earlier version kept unencrypted`, { level: "info" });
  return box;
}

/** The open pools of a service, closed when it stops (or fails to start). */
interface Pools {
  sql: Sql;
  listener: Sql;
  embedded: EmbeddedDatabase | null;
}

async function startParts(
  config: Config,
  role: Role,
  log: Log,
  now: (() => number) | undefined,
  database: ReadyDatabase,
  pools: Pools,
): Promise<Service> {
  const { sql, listener } = pools;
  const box = await openSecrets(config, database, sql, log);
  const keySource = { configured: configuredKeys(config), box };
  const tokens = await ensureAccessTokens(sql, box, config.tokens);
  const signingKeys = await ensureSigningKeys(sql, keySource);
  // The guard is on unless DISPATCH_ALLOW_PRIVATE_NETWORKS says otherwise, the embedded database included.
  const guard = new DestinationGuard(config.allowPrivateNetworks, (host, address) =>
    log(`destination ${host} refused: ${address} is not a public address`, { level: "debug" }),
  );
  const http = new HttpClient({ guard, maxResponseBytes: config.maxMessageBytes });
  const availability = new DatabaseAvailability(sql, log);
  let worker: WorkerHandle | null = null;
  const metrics = new Metrics(sql, {
    heartbeatId: () => worker?.heartbeatId ?? null,
    retentionMs: config.retentionMs,
    distributed: database.distributed,
    // An outage is logged once, by the availability; anything else (a late or broken read) at each scrape.
    readFailed: (error) => {
      if (!availability.failed(error)) log(`metrics: a scrape could not read the database: ${(error as Error).message}`);
    },
  });
  const tracing = config.tracing === null ? NO_TRACING : (await import("./observability/otel-tracing")).sdkTracing(config.tracing);
  const { distributed, endpoints: { direct } } = database;
  worker = role === "api" ? null : await startWorker({ config, direct, sql, listener, http, guard, keySource, availability, log, now, metrics, tracing, distributed });
  const redactor = new Redactor(await ensureRedactionKey(sql, box));
  const configuredTokens = fixedTokenSet(tokens.value, config.readonlyTokens);
  const acceptedTokens = role === "worker" ? null : await followAccessTokens(sql, listener, configuredTokens, availability, log);
  const deps = {
    config,
    sql,
    redactor,
    availability,
    log,
    now,
    workerHeartbeatId: worker?.heartbeatId ?? null,
    localDelivery: config.deliverFromPublish && role === "all" ? (worker?.local ?? null) : null,
    metrics,
    tracing,
    guard,
    secretBox: box,
    signingKeys: keySource,
    echo: database.embedded !== null,
  };
  const host = config.host ?? (database.embedded !== null ? "127.0.0.1" : "0.0.0.0");
  let server: ServerType | null = null;
  try {
    server = acceptedTokens === null ? null : await listen(createApp({ ...deps, acceptedTokens }), config.port, host);
  } catch (error) {
    await shutdown({ server: null, worker, acceptedTokens, http, pools, availability, tracing }).catch(() => {});
    throw listenError(error as NodeJS.ErrnoException, host, config.port);
  }
  const baseUrl = server ? baseUrlOf(server, host, config) : null;
  if (server && deps.echo) guard.allowOwnEcho((server.address() as AddressInfo).port, baseUrl);
  return {
    baseUrl,
    databaseUrl: database.databaseUrl,
    embedded: database.embedded !== null,
    tokens: tokens.value,
    signingKeys: signingKeys.value,
    madeSecrets: tokens.created || signingKeys.created,
    sql,
    localDelivery: deps.localDelivery ?? null,
    stop: () => shutdown({ server, worker, acceptedTokens, http, pools, availability, tracing }),
  };
}

/** The configured tokens and the stored ones, kept current; a failed read is an outage (logged once by `availability`) or logged. */
async function followAccessTokens(
  sql: Sql,
  listener: Sql,
  configured: TokenSet,
  availability: DatabaseAvailability,
  log: Log,
): Promise<LiveTokenSet> {
  const onError = (error: unknown) => void (availability.failed(error) || log(`access tokens: ${(error as Error).message}`));
  const tokens = new LiveTokenSet(sql, listener, configured, onError);
  await tokens.start();
  return tokens;
}

/**
 * How long an idle keep-alive connection is kept: longer than clients and
 * load balancers keep theirs (AWS ALB 60 s), so that it is they who close it.
 * Node's 5 s let a client reuse a connection the server was closing at that
 * moment (ECONNRESET; the SDKs do not retry every call).
 */
const KEEP_ALIVE_MS = 65_000;

/** Listens on `host`:`port`; rejects with the server's error (the address in use, say). */
function listen(app: ReturnType<typeof createApp>, port: number, host: string): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: withResourceCase(app.fetch), port, hostname: host }, () => {
      server.off("error", reject);
      resolve(server);
    });
    server.once("error", reject);
    Object.assign(server, { keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: KEEP_ALIVE_MS + 1000 });
  });
}

function baseUrlOf(server: ServerType, listening: string, config: Config): string {
  if (config.baseUrl) return config.baseUrl;
  const { port } = server.address() as AddressInfo;
  const host = listening === "0.0.0.0" || listening === "::" ? "localhost" : listening.includes(":") ? `[${listening}]` : listening;
  return `http://${host}:${port}`;
}

async function shutdown(parts: {
  server: ServerType | null;
  worker: WorkerHandle | null;
  acceptedTokens: LiveTokenSet | null;
  http: HttpClient;
  pools: Pools;
  availability: DatabaseAvailability;
  tracing: Tracing;
}): Promise<void> {
  // Nothing waits for the database any more: work still waiting fails and is released.
  parts.availability.stop();
  const closed = parts.server ? closeServer(parts.server) : Promise.resolve();
  // Each step runs even if an earlier one failed: the embedded database must always be stopped.
  const steps = [
    () => parts.worker?.stop(),
    () => closed,
    () => parts.acceptedTokens?.stop(),
    () => parts.http.close(),
    // The spans of the last requests and attempts are exported before the process ends.
    () => parts.tracing.shutdown(),
  ];
  const failures: unknown[] = [];
  for (const step of steps) await Promise.resolve(step()).catch((error: unknown) => failures.push(error));
  await closePools(parts.pools).catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

/**
 * Stops accepting connections and resolves once every one is gone: idle ones
 * are closed at once, and each that goes idle after its request is answered
 * is closed as it does (keep-alive would hold it for KEEP_ALIVE_MS).
 */
function closeServer(server: ServerType): Promise<void> {
  const http = server as ServerType & { closeIdleConnections?: () => void };
  const sweep = setInterval(() => http.closeIdleConnections?.(), 100);
  return new Promise((resolve) => {
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    http.closeIdleConnections?.();
  });
}

/** Ends the pools, then the embedded database, which is stopped whatever else failed. */
async function closePools(pools: Pools): Promise<void> {
  try {
    await Promise.all([pools.sql.end({ timeout: 5 }), pools.listener === pools.sql ? null : pools.listener.end({ timeout: 5 })]);
  } finally {
    await pools.embedded?.stop();
  }
}
