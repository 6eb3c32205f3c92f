/**
 * Database outages: telling them apart from query faults, and living through
 * them. Managed Postgres restarts, fails over and has maintenance windows; while
 * it is away, requests answer 503, workers wait, and the log gets one line when
 * the database goes and one when it is back, never one per attempt.
 *
 * A lost connection is not an outage by itself: servers and proxies close
 * sessions that sat idle (`idle_session_timeout`, a proxy's idle limit), and a
 * pooler may drop one. So a failure first probes the database at once; only
 * when the server cannot be reached for a few quick tries is it an outage,
 * logged and announced to `onRecovered` listeners. A closed session is
 * reopened quietly.
 */
import type { Sql } from "./client";

/** postgres.js and Node socket error codes that mean "no usable connection". */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT",
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN",
  // SQLSTATE: admin_shutdown, crash_shutdown, cannot_connect_now, idle_session_timeout, too_many_connections.
  "57P01", "57P02", "57P03", "57P05", "53300",
]);

/** Messages of node-postgres (graphile-worker's driver), whose connection errors carry no code. */
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|Client has encountered a connection error|ECONNREFUSED|ECONNRESET/i;

/**
 * True when `error` means the database cannot be reached right now (refused,
 * reset, shutting down, starting up, SQLSTATE class 08), not that a query was
 * wrong. Such a failure is retried later; any other is a fault.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("08"))) return true;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  return CONNECTION_MESSAGES.test(error.message) || isDatabaseUnavailable(error.cause);
}

/** How often an unreachable database is probed. */
const PROBE_INTERVAL_MS = 1000;
/** The quick probes after a failure, and their spacing: a closed idle session answers the first; an outage none. */
const QUICK_PROBES = 3;
const QUICK_PROBE_INTERVAL_MS = 100;

/**
 * Whether this process can reach the database, learnt from the failures its
 * parts report and confirmed by a probe: after a failure that means an outage
 * it runs `select 1` every second until one succeeds. Logs one line per change
 * of state.
 */
export class DatabaseAvailability {
  private outage: { since: number; reason: string; logged: boolean; probing: Promise<void> } | null = null;
  private stopped = false;
  private readonly recoveryListeners: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly log: (message: string, fields?: { level?: "info" | "warn" | "error" }) => void,
  ) {}

  /** False from the first outage failure until a probe succeeds. */
  get up(): boolean {
    return this.outage === null;
  }

  /**
   * Reports a failed database operation. Returns true when it was a lost
   * connection (recorded, logged once if it proves an outage, and nothing
   * more for the caller to log).
   */
  failed(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (this.outage === null && !this.stopped) {
      const outage = { since: Date.now(), reason: (error as Error).message, logged: false, probing: Promise.resolve() };
      this.outage = outage;
      outage.probing = this.probe(outage);
    }
    return true;
  }

  /** Resolves once the database is reachable (at once when it is not known to be down). */
  async whenUp(): Promise<void> {
    await this.outage?.probing;
  }

  /**
   * Runs `operation`, and while it fails because the database is away, waits
   * for it to come back and runs it again. Other failures are thrown. Used
   * where giving up would lose work already done (recording a delivery that
   * was sent).
   */
  async retrying<T>(operation: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await operation();
      } catch (error) {
        if (this.stopped || !this.failed(error)) throw error;
        await this.whenUp();
      }
    }
  }

  /** Calls `listener` each time the database is reachable again after an outage (not after a closed session). */
  onRecovered(listener: () => void): void {
    this.recoveryListeners.push(listener);
  }

  /** Stops probing; later failures are no longer retried. */
  stop(): void {
    this.stopped = true;
  }

  private async probe(outage: NonNullable<DatabaseAvailability["outage"]>): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      if (attempt > 1) await sleep(attempt <= QUICK_PROBES ? QUICK_PROBE_INTERVAL_MS : PROBE_INTERVAL_MS);
      try {
        await this.sql`select 1`;
        break;
      } catch {
        if (attempt === QUICK_PROBES && !this.stopped) {
          outage.logged = true;
          this.log(`database unreachable (${outage.reason}); waiting for it quietly`);
        }
      }
    }
    this.outage = null;
    if (this.stopped || !outage.logged) return;
    const seconds = ((Date.now() - outage.since) / 1000).toFixed(1);
    this.log(`database reachable again after ${seconds} s`, { level: "info" });
    for (const listener of this.recoveryListeners) listener();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
