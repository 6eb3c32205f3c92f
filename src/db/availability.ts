/**
 * Database outages: telling them apart from query faults, and living through
 * them. Managed Postgres restarts, fails over and has maintenance windows; while
 * it is away, requests answer 503, workers wait, and the log gets one line when
 * the database goes and one when it is back, never one per attempt.
 */
import type { Sql } from "./client";

/** postgres.js and Node socket error codes that mean "no usable connection". */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT",
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN",
  // SQLSTATE: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections.
  "57P01", "57P02", "57P03", "53300",
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

/**
 * Whether this process can reach the database, learnt from the failures its
 * parts report and confirmed by a probe: after a failure that means an outage
 * it runs `select 1` every second until one succeeds. Logs one line per change
 * of state.
 */
export class DatabaseAvailability {
  private outage: { since: number; probing: Promise<void> } | null = null;
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
   * Reports a failed database operation. Returns true when it was an outage
   * (recorded, logged once, and nothing more for the caller to log).
   */
  failed(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (this.outage === null && !this.stopped) {
      this.log(`database unreachable (${(error as Error).message}); waiting for it quietly`);
      this.outage = { since: Date.now(), probing: this.probe() };
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

  /** Calls `listener` each time the database is reachable again after an outage. */
  onRecovered(listener: () => void): void {
    this.recoveryListeners.push(listener);
  }

  /** Stops probing; later failures are no longer retried. */
  stop(): void {
    this.stopped = true;
  }

  private async probe(): Promise<void> {
    while (!this.stopped) {
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS).unref());
      try {
        await this.sql`select 1`;
        break;
      } catch {
        // Still away: the first failure was logged; keep quiet until it is back.
      }
    }
    const seconds = ((Date.now() - (this.outage?.since ?? Date.now())) / 1000).toFixed(1);
    this.outage = null;
    if (this.stopped) return;
    this.log(`database reachable again after ${seconds} s`, { level: "info" });
    for (const listener of this.recoveryListeners) listener();
  }
}
