/**
 * Assembles a running Dispatch: database (external or embedded), migrations,
 * settings, then the API and/or the worker. Used by the CLI and by tests.
 */
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import type { Config } from "./config/config";
import { DatabaseAvailability } from "./db/availability";
import { createSql, type Sql } from "./db/client";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./db/embedded";
import { migrate } from "./db/migrate";
import { fixedTokenSet, LiveTokenSet, type TokenSet } from "./domain/access-tokens/token-set";
import type { SigningKeys } from "./domain/delivery/signing";
import { ensureSigningKeys } from "./domain/delivery/signing-keys";
import { Redactor } from "./domain/messages/redaction";
import { ensureAccessTokens, ensureRedactionKey } from "./domain/settings";
import { installWorkflowHooks } from "./domain/workflows/hooks";
import { createApp } from "./http/server/app";
import type { Log } from "./observability/log";
import { Metrics } from "./observability/metrics";
import { HttpClient } from "./outbound/http-client";
import { startWorker, type WorkerHandle } from "./worker/runner";

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
  sql: Sql;
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
  const embedded = config.databaseUrl ? null : await startEmbedded(config.dataDir, log);
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  await migrate(databaseUrl);
  const sql = createSql(databaseUrl, 20);
  const tokens = await ensureAccessTokens(sql, config.tokens);
  const configuredKeys = config.currentSigningKey && config.nextSigningKey
    ? { current: config.currentSigningKey, next: config.nextSigningKey }
    : null;
  const signingKeys = await ensureSigningKeys(sql, configuredKeys);
  const http = new HttpClient({
    // The embedded database means local development, where destinations are local too.
    allowPrivateNetworks: config.allowPrivateNetworks || embedded !== null,
    maxResponseBytes: config.maxMessageBytes,
  });
  const availability = new DatabaseAvailability(sql, log);
  let worker: WorkerHandle | null = null;
  const metrics = new Metrics(sql, () => worker?.heartbeatId ?? null);
  worker = role === "api" ? null : await startWorker({ config, databaseUrl, sql, http, availability, log, now, metrics });
  const redactor = new Redactor(await ensureRedactionKey(sql));
  const configuredTokens = fixedTokenSet(tokens, config.readonlyTokens);
  const acceptedTokens = role === "worker" ? null : await followAccessTokens(sql, configuredTokens, availability, log);
  const deps = {
    config,
    sql,
    redactor,
    availability,
    log,
    now,
    workerHeartbeatId: worker?.heartbeatId ?? null,
    metrics,
  };
  const server = acceptedTokens === null ? null : await listen(createApp({ ...deps, acceptedTokens }), config);
  return {
    baseUrl: server ? baseUrlOf(server, config) : null,
    databaseUrl,
    embedded: embedded !== null,
    tokens,
    signingKeys,
    sql,
    stop: () => shutdown({ server, worker, acceptedTokens, http, sql, embedded, availability }),
  };
}

/** A migrated database and its pool, for commands that need no API or worker (`dispatch migrate`, `keys`, `token`). */
export interface OpenDatabase {
  sql: Sql;
  databaseUrl: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** Opens `config`'s database (starting the embedded one if none is configured) and applies its migrations. */
export async function openDatabase(config: Config, log: Log): Promise<OpenDatabase> {
  const embedded = config.databaseUrl ? null : await startEmbedded(config.dataDir, log);
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  try {
    await migrate(databaseUrl);
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  const sql = createSql(databaseUrl, 2);
  return {
    sql,
    databaseUrl,
    embedded: embedded !== null,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}

/** The configured tokens and the stored ones, kept current; a failed read is an outage (logged once by `availability`) or logged. */
async function followAccessTokens(sql: Sql, configured: TokenSet, availability: DatabaseAvailability, log: Log): Promise<LiveTokenSet> {
  const onError = (error: unknown) => void (availability.failed(error) || log(`access tokens: ${(error as Error).message}`));
  const tokens = new LiveTokenSet(sql, configured, onError);
  await tokens.start();
  return tokens;
}

async function startEmbedded(dataDir: string, log: Log): Promise<EmbeddedDatabase> {
  const cluster = await startEmbeddedPostgres(dataDir, { notice: log });
  const admin = createSql(cluster.url, 1);
  try {
    const [exists] = await admin`select 1 from pg_database where datname = 'dispatch'`;
    if (!exists) await admin`create database dispatch`;
  } finally {
    await admin.end();
  }
  return { ...cluster, url: cluster.url.replace(/\/postgres$/, "/dispatch") };
}

function listen(app: ReturnType<typeof createApp>, config: Config): Promise<ServerType> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(server));
  });
}

function baseUrlOf(server: ServerType, config: Config): string {
  if (config.baseUrl) return config.baseUrl;
  const { port } = server.address() as AddressInfo;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  return `http://${host}:${port}`;
}

async function shutdown(parts: {
  server: ServerType | null;
  worker: WorkerHandle | null;
  acceptedTokens: LiveTokenSet | null;
  http: HttpClient;
  sql: Sql;
  embedded: EmbeddedDatabase | null;
  availability: DatabaseAvailability;
}): Promise<void> {
  // Nothing waits for the database any more: work still waiting fails and is released.
  parts.availability.stop();
  const closed = parts.server ? new Promise((resolve) => parts.server!.close(resolve)) : Promise.resolve();
  (parts.server as { closeIdleConnections?: () => void } | null)?.closeIdleConnections?.();
  // Each step runs even if an earlier one failed: the embedded database must always be stopped.
  const steps = [
    () => parts.worker?.stop(),
    () => closed,
    () => parts.acceptedTokens?.stop(),
    () => parts.http.close(),
    () => parts.sql.end({ timeout: 5 }),
  ];
  const failures: unknown[] = [];
  for (const step of steps) await Promise.resolve(step()).catch((error: unknown) => failures.push(error));
  await parts.embedded?.stop();
  if (failures.length > 0) throw failures[0];
}
