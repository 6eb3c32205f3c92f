/**
 * The configured database, made ready before anything else runs: the
 * embedded one (DATABASE_URL unset) or the URLs (DATABASE_URL and
 * DATABASE_DIRECT_URL), resolved and checked (db/connection/preflight.ts),
 * then migrated, or checked to be current when DISPATCH_MIGRATE=false. A
 * failure on the way is one DatabaseStartError naming the URL and what to
 * change, and nothing is left running.
 */
import type { Config } from "./config/config";
import { isDistributed } from "./db/citus/layout";
import { createSql, type Sql } from "./db/client";
import { type ConnectionBudget, connectionBudget, describeBudget } from "./db/connection/budget";
import { type DatabaseEndpoints, type DatabaseUrl, resolveEndpoints } from "./db/connection/endpoints";
import { explainDatabaseError } from "./db/connection/errors";
import { CHECK_APPLICATION_NAME, checkDatabase, type ServerFacts } from "./db/connection/preflight";
import { describeServer, unverifiedServerWarning } from "./db/connection/settings";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./db/embedded/cluster";
import { migrate, requireCurrentSchema } from "./db/migrate";
import type { SecretBox } from "./domain/secrets/secret-box";
import type { Log } from "./observability/log";
import { secretBoxFor } from "./secrets";

/** A database ready for the service or a command. */
export interface ReadyDatabase {
  endpoints: DatabaseEndpoints;
  facts: ServerFacts;
  /** The app URL as given (or the embedded database's). */
  databaseUrl: string;
  embedded: EmbeddedDatabase | null;
  /** Whether the tables are distributed over a Citus cluster (db/citus/layout.ts): some statements then run per project. */
  distributed: boolean;
}

/** What a process will do with the database. */
export interface DatabasePlan {
  /** What the process will hold, for the checks and the messages about limits. */
  budget: ConnectionBudget;
  /** Apply pending migrations first (else require the schema to be current). */
  migrateFirst: boolean;
  /** How the embedded database's lines (where its data lives, what was found running) are logged: once at start, quietly for commands. */
  noticeLevel: "info" | "debug";
}

/** How the app pool closes idle connections: after a minute, or before the server would close them itself. */
const APP_POOL_IDLE_SECONDS = 60;

/** Starts (or joins) the database, checks every URL, and migrates it or requires its schema to be current. */
export async function prepareDatabase(config: Config, log: Log, plan: DatabasePlan): Promise<ReadyDatabase> {
  const { budget, migrateFirst } = plan;
  const embedded = config.databaseUrl ? null : await startEmbedded(config.dataDir, (line) => log(line, { level: plan.noticeLevel }));
  try {
    const app: DatabaseUrl = embedded ? { url: embedded.url, source: "the embedded database" } : { url: config.databaseUrl!, source: "DATABASE_URL" };
    const direct: DatabaseUrl | null = config.databaseDirectUrl ? { url: config.databaseDirectUrl, source: "DATABASE_DIRECT_URL" } : null;
    const endpoints = await resolveEndpoints(app, direct);
    for (const endpoint of new Set([endpoints.app, endpoints.direct])) {
      const warning = unverifiedServerWarning(endpoint.settings);
      if (warning !== null) log(warning, { level: plan.noticeLevel === "info" ? "warn" : "debug" });
    }
    // One session on the direct URL for the checks and then the migrations: a connection costs the server a process.
    const session = createSql(endpoints.direct, 1, { applicationName: CHECK_APPLICATION_NAME });
    try {
      const facts = await checkDatabase(endpoints, budget, session);
      const distributed = await explained(endpoints, budget, migrateFirst ? "migrating" : "starting", async () => {
        if (migrateFirst) return migrate(endpoints.direct, session);
        await requireCurrentSchema(session);
        return isDistributed(session);
      });
      return { endpoints, facts, databaseUrl: app.url, embedded, distributed };
    } finally {
      // Not waited on past a second: a check that timed out may still wait on it (in a pooler's queue).
      await session.end({ timeout: 1 }).catch(() => {});
    }
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}

/** The app pool: `size` connections at most, none prepared on a pooler, idle ones closed before the server would. */
export function createAppPool(database: ReadyDatabase, size: number): Sql {
  const serverIdle = database.facts.idleSessionTimeoutSeconds;
  const idleTimeoutSeconds = serverIdle === null ? APP_POOL_IDLE_SECONDS : Math.min(APP_POOL_IDLE_SECONDS, Math.max(1, serverIdle * 0.8));
  return createSql(database.endpoints.app, size, { prepare: !database.endpoints.pooled, idleTimeoutSeconds });
}

/**
 * Runs a start-up `step` on the database; a failure that Postgres (or the
 * network) caused becomes one explained line. A defect is thrown as it is.
 */
export async function explained<T>(
  endpoints: DatabaseEndpoints,
  budget: ConnectionBudget,
  step: "migrating" | "starting",
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const { settings } = step === "migrating" ? endpoints.direct : endpoints.app;
    throw explainDatabaseError(error, {
      source: settings.source,
      server: describeServer(settings),
      step,
      sslMode: settings.ssl.mode,
      connectionBudget: describeBudget(budget, endpoints.pooled),
    }) ?? error;
  }
}

async function startEmbedded(dataDir: string, notice: (line: string) => void): Promise<EmbeddedDatabase> {
  const cluster = await startEmbeddedPostgres(dataDir, { notice });
  const admin = createSql(cluster.url, 1);
  try {
    const [exists] = await admin`select 1 from pg_database where datname = 'dispatch'`;
    if (!exists) await admin`create database dispatch`;
  } finally {
    await admin.end();
  }
  const url = new URL(cluster.url);
  url.pathname = "/dispatch";
  return { ...cluster, url: url.toString() };
}

/** A migrated database and its pool, for commands that need no API or worker (`dispatch migrate`, `keys`, `token`). */
export interface OpenDatabase {
  sql: Sql;
  /** What stored secrets are sealed with. */
  box: SecretBox;
  databaseUrl: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** Opens `config`'s database (starting the embedded one if none is configured), migrated first when `migrateFirst`. */
export async function openDatabase(config: Config, log: Log, migrateFirst: boolean): Promise<OpenDatabase> {
  const budget = connectionBudget(COMMAND_POOL_SIZE, false);
  const database = await prepareDatabase(config, log, { budget, migrateFirst, noticeLevel: "debug" });
  const sql = createAppPool(database, COMMAND_POOL_SIZE);
  return {
    sql,
    box: secretBoxFor(config, database.embedded !== null),
    databaseUrl: database.databaseUrl,
    embedded: database.embedded !== null,
    async close() {
      await sql.end({ timeout: 5 });
      await database.embedded?.stop();
    },
  };
}

/** The operator's commands run a statement or two at a time. */
const COMMAND_POOL_SIZE = 2;
