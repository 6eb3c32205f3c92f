/**
 * A destination's circuit breaker, shared by every replica through its row in
 * `dispatch.destinations` (db/queries/destination-health.ts holds the SQL):
 *
 * - CLOSED: attempts flow. Each worker reports what it saw about once a
 *   second; the circuit opens when, in the last minute, at least `failures`
 *   attempts failed in a way that counts (failure.ts), at least `failureRate`
 *   of the attempts, and of at least `failingMessages` different messages (one
 *   message failing again and again at a healthy destination never opens it).
 * - OPEN: the destination's due messages wait in its line, spending no
 *   retries. After a cool-down (`coolDownMs`, doubling with each failed probe
 *   up to `maxCoolDownMs`) one worker takes a probe.
 * - PROBING: one message is attempted. An answer that does not count as a
 *   failure closes the circuit (its line flows again); a failure opens it
 *   again for longer, and the probe goes back to the front of the line,
 *   spending no retry either.
 * - GAVE_UP: open for longer than `giveUpAfterMs`, the circuit no longer holds
 *   anything back: its messages run out their own retries on their own
 *   schedule, each attempt failing at once, not sent, with an error that says
 *   the destination was unreachable (so a dead destination holds no slot and
 *   its backlog ends in the DLQ saying why). Once per cool-down (doubling up to
 *   `maxCoolDownMs`) one message is sent for real; an answer that does not
 *   count as a failure closes the circuit.
 *
 * Opened by hand, a circuit holds its messages until it is closed by hand:
 * no probes, no give-up. A 429's Retry-After holds the whole destination that
 * long, whatever the circuit. Every change is stored with its operator event
 * (operator-events.ts) in the transaction that made it.
 */
import type { Sql, Tx } from "../../db/client";
import type { ClaimedMessage } from "../../db/queries/claim-messages";
import {
  type CircuitChange,
  closeAfterProbe,
  closeByHand,
  closeGivenUp,
  type Observation,
  type OpenRule,
  openByHand,
  recordObservations,
  reopenAfterProbe,
  runCircuitTimers,
} from "../../db/queries/destination-health";
import { claimProbe, claimProbeAcrossProjects } from "../../db/queries/destination-lines";
import { DUE_CHANNEL } from "../../db/queries/work-list";
import { AppError } from "../errors";
import { circuitEvent, type OperatorEventSettings, publishOperatorEvents } from "../operator-events/operator-events";
import type { MessageSettings } from "../publish/options";

/** How circuits open, probe and give up. */
export interface CircuitSettings {
  rule: OpenRule;
  maxCoolDownMs: number;
  giveUpAfterMs: number;
  events: OperatorEventSettings;
}

/** The configuration circuits are made from (the `circuit*` and `operator*` settings). */
export interface CircuitConfig {
  circuitFailures: number;
  circuitFailureRate: number;
  circuitCoolDownMs: number;
  circuitMaxCoolDownMs: number;
  circuitGiveUpAfterMs: number;
  operatorEventsUrl: string | null;
}

/** How circuits open, probe, give up and announce themselves, from the configuration. */
export function circuitSettings(config: CircuitConfig, messages: MessageSettings): CircuitSettings {
  return {
    rule: {
      failures: config.circuitFailures,
      failureRate: config.circuitFailureRate,
      // One message failing again and again is that message's problem, not its destination's.
      failingMessages: Math.min(3, config.circuitFailures),
      coolDownMs: config.circuitCoolDownMs,
    },
    maxCoolDownMs: config.circuitMaxCoolDownMs,
    giveUpAfterMs: config.circuitGiveUpAfterMs,
    events: { url: config.operatorEventsUrl, messages },
  };
}

/**
 * Stores what a worker saw of its destinations, closes the GAVE_UP circuits
 * that answered again, and runs the circuits' timers (give-up, lost probes);
 * returns every change, its operator event stored with it.
 */
export async function reportHealth(tx: Tx, observations: Observation[], settings: CircuitSettings): Promise<CircuitChange[]> {
  const opened = await recordObservations(tx, observations, settings.rule);
  const answered = observations.filter((o) => o.answered).map((o) => o.destination);
  const changes = [...opened, ...(await closeGivenUp(tx, answered)), ...(await runCircuitTimers(tx, settings.giveUpAfterMs))];
  await announce(tx, settings, changes);
  return changes;
}

/**
 * Takes the probe of one circuit whose cool-down is over, for `workerId`:
 * its destination's oldest waiting message, claimed. Null when none is ready.
 */
export function takeProbe(
  sql: Sql,
  workerId: string,
  timeouts: { defaultMs: number; graceMs: number },
  settings: CircuitSettings,
  distributed: boolean,
): Promise<{ probe: ClaimedMessage; change: CircuitChange } | null> {
  return sql.begin(async (tx) => {
    const claim = distributed ? claimProbeAcrossProjects : claimProbe;
    const probe = await claim(tx, workerId, timeouts.defaultMs, timeouts.graceMs);
    if (probe === null) return null;
    const change: CircuitChange = {
      destination: probe.destination!,
      from: "OPEN",
      to: "PROBING",
      reason: `probing with message ${probe.id}`,
      probeAt: null,
    };
    await announce(tx, settings, [change]);
    return { probe, change };
  });
}

/**
 * Settles the probe `message` after its attempt, in the transaction that
 * records it: `failure` (why it failed, in words) opens the circuit again for
 * longer; null (the destination answered) closes it.
 */
export async function settleProbe(
  tx: Tx,
  message: ClaimedMessage,
  failure: string | null,
  settings: CircuitSettings,
): Promise<CircuitChange | null> {
  const destination = message.destination!;
  const change =
    failure === null
      ? await closeAfterProbe(tx, destination, message.id)
      : await reopenAfterProbe(tx, destination, message.id, `the probe failed: ${failure}`, settings.maxCoolDownMs);
  if (change !== null) await announce(tx, settings, [change]);
  return change;
}

/** Opens `destination`'s circuit by hand (null when it already was). */
export async function openCircuitByHand(tx: Tx, destination: string, settings: CircuitSettings): Promise<CircuitChange | null> {
  const change = await openByHand(tx, destination, "opened by hand");
  if (change !== null) await announce(tx, settings, [change]);
  return change;
}

/** Closes `destination`'s circuit by hand (null when it was closed); a 404 when nothing was ever attempted to it. */
export async function closeCircuitByHand(tx: Tx, destination: string, settings: CircuitSettings): Promise<CircuitChange | null> {
  const [known] = await tx`select 1 from dispatch.destinations where destination = ${destination}`;
  if (known === undefined) throw new AppError(404, `destination ${destination} not found: nothing was attempted to it`);
  const change = await closeByHand(tx, destination);
  if (change !== null) await announce(tx, settings, [{ ...change, reason: "closed by hand" }]);
  return change;
}

/**
 * Stores each change's operator event; when one lets a line go (closed, gave
 * up), wakes every worker (a NOTIFY on the engine's channel) to serve it.
 */
async function announce(tx: Tx, settings: CircuitSettings, changes: CircuitChange[]): Promise<void> {
  if (changes.some((change) => change.to === "CLOSED" || change.to === "GAVE_UP")) await tx`select pg_notify(${DUE_CHANNEL}, '')`;
  await publishOperatorEvents(tx, settings.events, changes.map(circuitEvent));
}
