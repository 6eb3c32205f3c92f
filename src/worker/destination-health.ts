/**
 * What one worker knows of its destinations' health: it counts every
 * attempt's outcome per destination and reports the counts about once a
 * second (`reportHealth`, which opens circuits, gives up on them and runs
 * their timers, for every replica at once), then reads back which
 * destinations hold their messages now. The claim reads the circuits itself;
 * this worker's copy serves what does not go through the claim: messages its
 * own publishes stored claimed, a probe that is due, and the words an error
 * gives when a circuit gave up.
 */
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import type { ClaimedMessage } from "../db/queries/claim-messages";
import { FAILING_KEPT, type Observation, takeGaveUpAttempt } from "../db/queries/destination-health";
import type { CircuitState } from "../db/vocabulary";
import type { Attempt } from "../domain/delivery/attempt";
import { retryAfterFromHeaders } from "../domain/delivery/retry-after";
import { type CircuitSettings, reportHealth, takeProbe } from "../domain/destinations/circuit";
import { failureKind } from "../domain/destinations/failure";
import type { Log } from "../observability/log";
import type { Metrics } from "../observability/metrics";

/** A destination whose circuit is not CLOSED, or that a 429 holds, as last read. */
export interface KnownCircuit {
  circuit: CircuitState;
  openedAt: Date | null;
  openReason: string | null;
  openedByHand: boolean;
  probeAt: Date | null;
  heldUntil: Date | null;
}

/** The columns of a `KnownCircuit`, with its destination. */
const KNOWN_COLUMNS = `destination, circuit, opened_at as "openedAt", open_reason as "openReason", opened_by_hand as "openedByHand",
  probe_at as "probeAt", held_until as "heldUntil"`;

/** What the health reports need. */
export interface HealthDeps {
  sql: Sql;
  availability: DatabaseAvailability;
  settings: CircuitSettings;
  /** How often the counts are reported and the circuits read back. */
  intervalMs: number;
  /** The probe's deadline: the message's timeout (or this default) and a grace. */
  probeTimeouts: { defaultMs: number; graceMs: number };
  /** Whether the tables are distributed over a Citus cluster: probes are then taken in steps (`claimProbeAcrossProjects`). */
  distributed: boolean;
  metrics: Metrics;
  log: Log;
}

/** One worker's counts and view of the circuits. */
export class DestinationHealth {
  private observed = new Map<string, Observation>();
  private circuits = new Map<string, KnownCircuit>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();

  constructor(private readonly deps: HealthDeps) {}

  /** Reads the circuits once, then reports and reads again every interval. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void (this.ticking = this.tick()), this.deps.intervalMs);
    this.timer.unref();
  }

  /** Stops reporting after one last report. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    await this.tick();
  }

  /**
   * Counts one attempt of `message`; returns how long a 429 asked its
   * destination to be left alone (0 when none did).
   */
  observe(message: ClaimedMessage, attempt: Attempt): number {
    const destination = message.destination;
    if (destination === null || (attempt.kind === "error" && attempt.notSent)) return 0;
    const seen = this.observation(destination, attempt.startedAt);
    seen.attempts++;
    seen.latencyMs += attempt.durationMs;
    const kind = failureKind(attempt);
    const status = attempt.kind === "response" ? attempt.status : null;
    if (kind === null) {
      seen.answered = true;
      // A circuit that gave up closes at the next report; this worker sends again at once.
      if (this.circuits.get(destination)?.circuit === "GAVE_UP") this.circuits.delete(destination);
      if (status !== null && status < 300) seen.lastSuccessAt = new Date(attempt.startedAt.getTime() + attempt.durationMs);
      return 0;
    }
    seen.failures++;
    seen.kinds[kind] = (seen.kinds[kind] ?? 0) + 1;
    if (!seen.failing.includes(message.id) && seen.failing.length < FAILING_KEPT) seen.failing.push(message.id);
    seen.lastError = attempt.kind === "error" ? attempt.error : `destination responded with status ${status}`;
    seen.lastStatus = status;
    seen.lastErrorAt = new Date(attempt.startedAt.getTime() + attempt.durationMs);
    if (status !== 429 || attempt.kind !== "response") return 0;
    const holdMs = retryAfterFromHeaders(attempt.headers, new Date()) ?? 0;
    seen.holdMs = Math.max(seen.holdMs, holdMs);
    return holdMs;
  }

  /** Whether `destination`'s messages wait (its circuit open or probing, or a 429's hold), as last read. */
  holds(destination: string | null): boolean {
    const known = destination === null ? undefined : this.circuits.get(destination);
    if (known === undefined) return false;
    return known.circuit === "OPEN" || known.circuit === "PROBING" || (known.heldUntil?.getTime() ?? 0) > Date.now();
  }

  /** Whether some circuit's probe may start now, as last read. */
  probeDue(): boolean {
    const now = Date.now();
    for (const known of this.circuits.values()) {
      if (known.circuit === "OPEN" && !known.openedByHand && known.probeAt !== null && known.probeAt.getTime() <= now) return true;
    }
    return false;
  }

  /** Takes a due probe for `workerId` (its message, claimed), or null. */
  async takeProbe(workerId: string): Promise<ClaimedMessage | null> {
    const taken = await takeProbe(this.deps.sql, workerId, this.deps.probeTimeouts, this.deps.settings, this.deps.distributed);
    if (taken === null) {
      // Nothing ready (another worker took it, or the line is empty): look again after the next report.
      for (const known of this.circuits.values()) if (known.circuit === "OPEN") known.probeAt = null;
      return null;
    }
    const known = this.circuits.get(taken.change.destination);
    if (known !== undefined) known.circuit = "PROBING";
    this.changed(taken.change.destination, "PROBING", taken.change.reason);
    return taken.probe;
  }

  /**
   * Why a message to `destination` is not sent, when its circuit gave up; null
   * to send it: any other circuit, or the one real attempt a GAVE_UP circuit
   * makes per cool-down (the first worker to take it, `takeGaveUpAttempt`),
   * whose answer closes the circuit.
   */
  async unreachable(destination: string | null): Promise<string | null> {
    if (destination === null) return null;
    // Open as last read, yet claimed: the circuit moved on since (gave up or closed, by this worker's report
    // whose NOTIFY woke the claim before the circuits were read back, or by another worker's): read it now.
    if (this.circuits.get(destination)?.circuit === "OPEN") await this.refreshOne(destination);
    const known = this.circuits.get(destination);
    if (known?.circuit !== "GAVE_UP") return null;
    if (known.probeAt !== null && known.probeAt.getTime() <= Date.now()) {
      known.probeAt = null;
      const next = await this.deps.sql.begin((tx) => takeGaveUpAttempt(tx, destination, this.deps.settings.maxCoolDownMs));
      if (next !== null) return (known.probeAt = next), null;
    }
    const since = known.openedAt?.toISOString() ?? "a while";
    return `destination ${destination} unreachable: its circuit has been open since ${since} (${known.openReason ?? "failures"}) and gave up`;
  }

  /** The circuit state of `destination`, as last read. */
  circuitOf(destination: string): CircuitState {
    return this.circuits.get(destination)?.circuit ?? "CLOSED";
  }

  /** Every known circuit that is not CLOSED, as last read. */
  openCircuits(): ReadonlyMap<string, KnownCircuit> {
    return this.circuits;
  }

  private async tick(): Promise<void> {
    try {
      await this.report();
      await this.refresh();
    } catch (error) {
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: destination health report failed: ${(error as Error).message}`);
    }
  }

  /** Reports the counts since the last report (lost with the report if it fails: they are a minute's sample). */
  private async report(): Promise<void> {
    const observations = [...this.observed.values()];
    this.observed = new Map();
    const changes = await this.deps.sql.begin((tx) => reportHealth(tx, observations, this.deps.settings));
    for (const change of changes) this.changed(change.destination, change.to, change.reason);
  }

  private async refresh(): Promise<void> {
    const rows = await this.deps.sql<(KnownCircuit & { destination: string })[]>`
      select ${this.deps.sql.unsafe(KNOWN_COLUMNS)} from dispatch.destinations where circuit <> 'CLOSED' or held_until is not null`;
    this.circuits = new Map(rows.map(({ destination, ...known }) => [destination, known]));
  }

  /** Reads `destination`'s circuit again. */
  private async refreshOne(destination: string): Promise<void> {
    const [row] = await this.deps.sql<(KnownCircuit & { destination: string })[]>`
      select ${this.deps.sql.unsafe(KNOWN_COLUMNS)} from dispatch.destinations
      where destination = ${destination} and (circuit <> 'CLOSED' or held_until is not null)`;
    if (row === undefined) return void this.circuits.delete(destination);
    const { destination: _, ...known } = row;
    this.circuits.set(destination, known);
  }

  /** Counts and logs circuit changes this process made (the recorder's, for the probes it records, too). */
  changed(destination: string, to: CircuitState, reason: string | null): void {
    this.deps.metrics.circuitChanges.inc({ to });
    const level = to === "OPEN" || to === "GAVE_UP" ? "warn" : "info";
    this.deps.log(`destination ${destination}: circuit ${to}${reason === null ? "" : ` (${reason})`}`, { level, destination });
  }

  private observation(destination: string, at: Date): Observation {
    let seen = this.observed.get(destination);
    if (seen === undefined) {
      seen = {
        destination, attempts: 0, failures: 0, kinds: {}, failing: [], latencyMs: 0, lastError: null, lastStatus: null,
        lastErrorAt: null, lastSuccessAt: null, lastAttemptAt: at, holdMs: 0, answered: false,
      };
      this.observed.set(destination, seen);
    }
    if (at > seen.lastAttemptAt) seen.lastAttemptAt = at;
    return seen;
  }
}
