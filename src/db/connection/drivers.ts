/**
 * One endpoint (transport.ts), given to each driver in its own terms: the
 * same server, credentials, TLS options, application name and connect
 * timeout. Nothing is left for a driver to read from the URL or from PG*
 * variables on its own, where the two would read it differently.
 */
import pg, { type PoolConfig } from "pg";
import type postgres from "postgres";
import type { Endpoint } from "./transport";

/** postgres.js options for a pool of at most `max` connections to `endpoint`. */
export function postgresJsOptions(
  endpoint: Endpoint,
  pool: { max: number; prepare: boolean; idleTimeoutSeconds: number | null },
): postgres.Options<Record<string, postgres.PostgresType>> {
  const { settings, transport } = endpoint;
  return {
    ...(settings.socket ? { path: `${settings.host}/.s.PGSQL.${settings.port}` } : { host: settings.host, port: settings.port }),
    database: settings.database,
    username: settings.user,
    password: settings.password,
    ssl: transport.tls === "prefer" ? "prefer" : transport.tls ? { ...transport.options } : false,
    connect_timeout: settings.connectTimeoutSeconds,
    max: pool.max,
    prepare: pool.prepare,
    idle_timeout: pool.idleTimeoutSeconds ?? undefined,
    connection: {
      application_name: settings.applicationName,
      ...(settings.options !== null ? { options: settings.options } : {}),
    },
  };
}

/** node-postgres options (graphile-worker's pool) for at most `max` connections to `endpoint`. */
export function nodePostgresConfig(endpoint: Endpoint, max: number): PoolConfig {
  const { settings, transport } = endpoint;
  if (transport.tls === "prefer") throw new Error("node-postgres needs a decided transport (resolveEndpoint)");
  return {
    host: settings.host,
    port: settings.port,
    database: settings.database,
    user: settings.user,
    password: settings.password,
    // A copy: node-postgres makes the `key` of the object it is given non-enumerable, which would hide it from postgres.js.
    ssl: transport.tls ? { ...transport.options } : false,
    application_name: settings.applicationName,
    connectionTimeoutMillis: settings.connectTimeoutSeconds * 1000,
    ...(settings.options !== null ? { options: settings.options } : {}),
    max,
  };
}

/**
 * A node-postgres pool on `endpoint`, its idle and checked-out connections'
 * errors handed to `onError` (graphile-worker adds handlers of its own only to
 * a pool without any; an unhandled one would crash the process).
 */
export function createNodePostgresPool(config: PoolConfig, onError: (error: Error) => void = () => {}): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on("error", onError);
  pool.on("connect", (client) => client.on("error", onError));
  return pool;
}
