/**
 * Why the database cannot be used, worded for the person running Dispatch:
 * Postgres' own message (or the TLS or socket error), which URL it concerns,
 * and what to change. The CLI prints it alone, without a stack trace: these
 * are expected failures of a configuration, not defects.
 */

/** A database the service cannot start on, with what to do about it. */
export class DatabaseStartError extends Error {}

/** What was being done, and on which URL, when an error came. */
export interface ErrorContext {
  /** The variable the URL came from (`DATABASE_URL`, `DATABASE_DIRECT_URL`). */
  source: string;
  /** `host:port/database`. */
  server: string;
  /** What ran: "connecting", "migrating", "starting". */
  step: "connecting" | "migrating" | "starting";
  /** The sslmode the connection was made under. */
  sslMode: string;
  /** What to lower or raise when the server has no connection left (the process's connection budget). */
  connectionBudget: string;
}

/** TLS verification failures (Node's codes for a certificate it did not accept). */
const CERTIFICATE_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "SELF_SIGNED_CERT_IN_CHAIN", "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "UNABLE_TO_GET_ISSUER_CERT", "CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID", "CERT_SIGNATURE_FAILURE",
]);

/** Socket-level failures: the server could not be reached at all. */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ENOENT"]);

/** The SQLSTATE of an error the server sent (either driver), or null. */
export function sqlState(error: unknown): string | null {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === "string" && typeof severity === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

/** `error` as one explained DatabaseStartError, or null when it is not a database's (a defect, to be reported as one). */
export function explainDatabaseError(thrown: unknown, context: ErrorContext): DatabaseStartError | null {
  if (thrown instanceof DatabaseStartError) return thrown;
  if (!(thrown instanceof Error)) return null;
  // drizzle wraps the driver's error ("Failed query: ...") in its own, the cause being Postgres'.
  const error = thrown.cause instanceof Error && sqlState(thrown) === null ? thrown.cause : thrown;
  const where = `${context.source} (${context.server})`;
  const state = sqlState(error);
  if (state !== null) return new DatabaseStartError(`${where}: ${serverErrorLine(error.message, state, context)}`);
  const code = (error as NodeJS.ErrnoException).code ?? "";
  if (CERTIFICATE_CODES.has(code)) {
    return new DatabaseStartError(
      `${where}: the server's TLS certificate was not accepted under sslmode=${context.sslMode} (${error.message}): ` +
        "give the CA that signed it with sslrootcert=<file> (docs/managed-postgres.md names each provider's), or use sslmode=verify-ca when connecting by address",
    );
  }
  if (code === "CONNECT_TIMEOUT") return new DatabaseStartError(`${where}: no answer while ${context.step} (${error.message})`);
  if (UNREACHABLE_CODES.has(code) || /does not support SSL|Connection terminated|socket disconnected|EPROTO/i.test(error.message)) {
    return new DatabaseStartError(`${where}: cannot connect while ${context.step}: ${error.message}`);
  }
  return null;
}

/** Postgres' message and, where the state calls for one, the remedy. */
function serverErrorLine(message: string, state: string, context: ErrorContext): string {
  const said = `${message} (SQLSTATE ${state})`;
  if (state === "53300") return `${said}: ${context.connectionBudget}`;
  if (state === "28000" && /no encryption/.test(message)) return `${said}: the server requires TLS; set sslmode=require or stronger in ${context.source}`;
  if (state === "28P01" || state === "28000") return `${said}: check the user and password in ${context.source}, and the server's pg_hba.conf`;
  if (state === "3D000") return `${said}: create the database, or name an existing one in ${context.source}`;
  if (state === "42501") return `${said}: ${context.step === "migrating" ? MIGRATE_PRIVILEGES : RUNTIME_PRIVILEGES}`;
  return said;
}

const MIGRATE_PRIVILEGES =
  'migrating needs CREATE on the database and ownership of the schemas dispatch and graphile_worker (GRANT CREATE ON DATABASE <db> TO <role>): ' +
  'run "dispatch migrate" as such a role and start with DISPATCH_MIGRATE=false (README "Database privileges")';
const RUNTIME_PRIVILEGES =
  "the runtime role needs USAGE on the schemas dispatch and graphile_worker, DML on their tables, and USAGE on their sequences " +
  '(README "Database privileges" has the GRANT statements)';
