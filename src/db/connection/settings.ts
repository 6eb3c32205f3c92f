/**
 * How to reach one Postgres server, read once from a connection URL with
 * libpq's parameters and libpq's meaning, so that both of Dispatch's drivers
 * (postgres.js for the app, node-postgres inside graphile-worker) are given
 * the same thing (drivers.ts). A parameter neither of them can honour stops
 * the start with a message naming it, rather than being passed on and read
 * differently by each.
 */
import { DatabaseStartError } from "./errors";

/** libpq's `sslmode` values, weakest first. */
export const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The TLS part of a URL: the mode and the files it names. */
export interface SslSettings {
  mode: SslMode;
  /** A PEM file of trusted CAs, `"system"` for the trust store Node ships, or null. */
  rootCert: string | null;
  /** The client's certificate and key (PEM files) and the key's passphrase. */
  cert: string | null;
  key: string | null;
  password: string | null;
}

/** One server as a URL names it. */
export interface ConnectionSettings {
  /** The variable the URL came from (`DATABASE_URL`), named in every message about it. */
  source: string;
  /** A host name or address, or the folder of a Unix socket (`socket`). */
  host: string;
  port: number;
  socket: boolean;
  database: string;
  user: string;
  password: string;
  ssl: SslSettings;
  applicationName: string;
  connectTimeoutSeconds: number;
  /** libpq's `options`: command-line options for the server process (`-c name=value`). */
  options: string | null;
}

/** Parameters read here; each is given to both drivers. */
const KNOWN = new Set([
  "sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword",
  "application_name", "connect_timeout", "options", "host", "channel_binding",
]);

/** Why a parameter cannot be honoured, for those users most often carry over from other tools. */
const REFUSED: Record<string, string> = {
  target_session_attrs: "graphile-worker's driver (node-postgres) cannot choose a server by its role; name the primary's host",
  sslnegotiation: "graphile-worker's driver (node-postgres) cannot negotiate TLS directly; leave it out (the default, postgres, works everywhere)",
  gssencmode: "neither driver speaks GSSAPI encryption; use sslmode",
  krbsrvname: "neither driver speaks Kerberos",
  sslcrl: "neither driver reads a certificate revocation list",
  sslcompression: "TLS compression is not available in Node",
  pgbouncer: "that is a Prisma parameter: give the pooler's URL in DATABASE_URL and a direct one in DATABASE_DIRECT_URL",
  schema: "Dispatch keeps its tables in its own schemas (dispatch, graphile_worker)",
};

const DEFAULT_CONNECT_TIMEOUT_SECONDS = 5;

/** Reads `url` (from the variable `source`); a parameter that cannot be honoured is a DatabaseStartError naming it. */
export function parseConnectionUrl(url: string, source: string): ConnectionSettings {
  if (/^[a-z]+:\/\/[^/?]*,/i.test(url)) {
    throw new DatabaseStartError(`${source} names several hosts: graphile-worker's driver (node-postgres) connects to one; name the primary`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseStartError(`${source} is not a valid URL (postgres://user:password@host:5432/database?sslmode=require)`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new DatabaseStartError(`${source} must start with postgres:// or postgresql://`);
  }
  const params = queryParameters(parsed, source);
  const socketDir = params.get("host") ?? null;
  if (socketDir !== null && !socketDir.startsWith("/")) {
    throw new DatabaseStartError(`${source} host=${socketDir}: only a Unix socket folder (host=/path) may be given as a parameter; put a host name in the URL`);
  }
  return {
    source,
    host: socketDir ?? (decodeURIComponent(parsed.hostname.replace(/^\[|\]$/g, "")) || "localhost"),
    port: parsed.port ? Number(parsed.port) : 5432,
    socket: socketDir !== null,
    database: decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || "postgres",
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    ssl: sslSettings(params, source),
    applicationName: params.get("application_name") ?? "dispatch",
    connectTimeoutSeconds: connectTimeout(params.get("connect_timeout"), source),
    options: params.get("options") ?? null,
  };
}

/** The URL's parameters, every one known or refused with its reason. */
function queryParameters(url: URL, source: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (REFUSED[name]) throw new DatabaseStartError(`${source} parameter ${name}: ${REFUSED[name]}`);
    if (!KNOWN.has(name)) {
      throw new DatabaseStartError(
        `${source} parameter ${name} is not supported: Dispatch takes ${[...KNOWN].join(", ")} (see README "Managed Postgres")`,
      );
    }
    params.set(name, value);
  }
  const binding = params.get("channel_binding");
  if (binding !== undefined && binding !== "disable" && binding !== "prefer") {
    throw new DatabaseStartError(
      `${source} channel_binding=${binding}: the app's driver (postgres.js) cannot do SCRAM channel binding; ` +
        "remove the parameter or set channel_binding=prefer (sslmode=verify-full guards against the same attack)",
    );
  }
  return params;
}

/** The TLS settings, checked as libpq checks them. */
function sslSettings(params: Map<string, string>, source: string): SslSettings {
  const rootCert = params.get("sslrootcert") ?? null;
  const given = params.get("sslmode");
  if (given !== undefined && !SSL_MODES.includes(given as SslMode)) {
    throw new DatabaseStartError(`${source} sslmode=${given} is not one of ${SSL_MODES.join(", ")}`);
  }
  // As libpq 16: the system's trust store makes verify-full the default, and refuses weaker modes.
  const mode = (given ?? (rootCert === "system" ? "verify-full" : "prefer")) as SslMode;
  if (rootCert === "system" && mode !== "verify-full") {
    throw new DatabaseStartError(`${source} sslmode=${mode} may not be used with sslrootcert=system: use sslmode=verify-full`);
  }
  const cert = params.get("sslcert") ?? null;
  const key = params.get("sslkey") ?? null;
  if ((cert === null) !== (key === null)) throw new DatabaseStartError(`${source} needs both sslcert and sslkey for a client certificate`);
  return { mode, rootCert, cert, key, password: params.get("sslpassword") ?? null };
}

/** libpq's `connect_timeout`: seconds, at least 2; 0 means wait for ever, which a start must not, so it means the default. */
function connectTimeout(value: string | undefined | null, source: string): number {
  if (value === undefined || value === null) return DEFAULT_CONNECT_TIMEOUT_SECONDS;
  if (!/^\d+$/.test(value)) throw new DatabaseStartError(`${source} connect_timeout=${value} must be a whole number of seconds`);
  const seconds = Number(value);
  return seconds === 0 ? DEFAULT_CONNECT_TIMEOUT_SECONDS : Math.max(seconds, 2);
}

/** Where the settings point, for messages: `host:port/database` (never the password). */
export function describeServer(settings: ConnectionSettings): string {
  return `${settings.socket ? `socket ${settings.host}` : `${settings.host}:${settings.port}`}/${settings.database}`;
}

/**
 * A warning when `settings` reach a server on another machine without
 * checking who answers: any `sslmode` below `verify-full` (what libpq
 * defaults to, `prefer`, included) lets a machine in between read and change
 * everything, the tokens in the queries too. Null for a Unix socket, a
 * loopback host and `verify-full`.
 */
export function unverifiedServerWarning(settings: ConnectionSettings): string | null {
  if (settings.socket || settings.ssl.mode === "verify-full" || isLoopbackHost(settings.host)) return null;
  return (
    `${settings.source}: sslmode=${settings.ssl.mode} on ${settings.host} does not verify the server's certificate and name, ` +
    "so a machine in between could read and change the traffic; use sslmode=verify-full (with sslrootcert=system or your provider's CA file)"
  );
}

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
