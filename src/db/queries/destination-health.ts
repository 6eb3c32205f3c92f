/**
 * The destinations' health and circuits (`dispatch.destinations`): what the
 * workers saw of each destination, added about once a second, and every
 * transition of a circuit, each guarded by the state it starts from so that
 * one replica makes it and the others change nothing. Each transition
 * returns what changed, so that its maker alone reports it.
 */
import type { Tx } from "../client";
import type { CircuitState } from "../vocabulary";
import { DUE_CHANNEL } from "./work-list";

/**
 * A destination holds its messages back: its circuit is OPEN or PROBING, or a
 * 429 holds it. For a `dispatch.destinations d` row; the first clause lets the
 * planner use `destinations_holding_idx`.
 */
export const DESTINATION_HELD = `(d.circuit <> 'CLOSED' or d.held_until is not null)
  and (d.circuit in ('OPEN', 'PROBING') or d.held_until > now())`;

/**
 * `now()` plus `ms` milliseconds, where `ms` is SQL of the row's columns (a whole number of milliseconds:
 * `maxCoolDownMs`, a cool-down), as an update of a circuit sets it. Through the epoch, not `timestamptz +
 * interval`: on Citus, where `destinations` is a reference table, an update may call a stable function
 * only on constants (`extract(epoch from now())` is one, `to_timestamp` is immutable).
 */
function msFromNow(tx: Tx, ms: string) {
  return tx.unsafe(`to_timestamp(extract(epoch from now()) + (${ms}) / 1000.0)`);
}

/** The breaker's two half-windows are this long each: the rule reads between one and two of them. */
export const HALF_WINDOW_MS = 30_000;
/** Distinct failing messages kept per half-window: more than any threshold reads. */
export const FAILING_KEPT = 10;

/** What one worker saw of one destination since its last report. */
export interface Observation {
  destination: string;
  attempts: number;
  failures: number;
  /** Failures by kind (domain/destinations/failure.ts). */
  kinds: Record<string, number>;
  /** Messages whose attempts failed (distinct, a few). */
  failing: string[];
  latencyMs: number;
  lastError: string | null;
  lastStatus: number | null;
  lastErrorAt: Date | null;
  lastSuccessAt: Date | null;
  lastAttemptAt: Date;
  /** A 429's Retry-After: the destination is held this long from now (0: no hold). */
  holdMs: number;
  /** Whether any attempt got an answer that is not a failure (the destination took it, or spoke about the message). */
  answered: boolean;
}

/** When a circuit opens: the rule, and the first cool-down. */
export interface OpenRule {
  /** Failed attempts in the window, at least. */
  failures: number;
  /** Share of the window's attempts that failed, at least. */
  failureRate: number;
  /** Distinct messages among the failures, at least: one message failing again and again is that message's problem. */
  failingMessages: number;
  coolDownMs: number;
}

/** A circuit that changed state, as its maker reports it. */
export interface CircuitChange {
  destination: string;
  from: CircuitState;
  to: CircuitState;
  reason: string | null;
  probeAt: Date | null;
}

const CHANGE_COLUMNS = `destination, circuit as "to", open_reason as reason, probe_at as "probeAt"`;

/** The failure counts merged: `a` and `b` are jsonb objects of counts. */
const mergeKinds = (a: string, b: string) => `coalesce((
  select jsonb_object_agg(k, n) from (
    select key as k, sum(value::int) as n from (select * from jsonb_each_text(${a}) union all select * from jsonb_each_text(${b})) e
    group by key) s), '{}')`;

/** The distinct ids of two arrays, at most `FAILING_KEPT`. */
const mergeFailing = (a: string, b: string) =>
  `array(select distinct f from unnest(${a} || ${b}) f order by f limit ${FAILING_KEPT})`;

/**
 * Adds `observations` (one transaction, rows locked in destination order):
 * rolls each row's half-windows on, adds the counts, holds a destination a
 * 429 asked to, and opens each CLOSED circuit that meets `rule`. Returns the
 * circuits it opened.
 */
export async function recordObservations(tx: Tx, observations: Observation[], rule: OpenRule): Promise<CircuitChange[]> {
  if (observations.length === 0) return [];
  const names = observations.map((o) => o.destination).sort();
  await tx`
    update dispatch.destinations set
      previous_attempts = case when rolled.over_two then 0 else attempts end,
      previous_failures = case when rolled.over_two then 0 else failures end,
      previous_failure_kinds = case when rolled.over_two then '{}' else failure_kinds end,
      previous_failing_messages = case when rolled.over_two then '{}' else failing_messages end,
      previous_latency_ms_total = case when rolled.over_two then 0 else latency_ms_total end,
      attempts = 0, failures = 0, failure_kinds = '{}', failing_messages = '{}', latency_ms_total = 0,
      window_started_at = now()
    from (select d.destination, d.window_started_at <= now() - ${2 * HALF_WINDOW_MS} * interval '1 millisecond' as over_two
          from dispatch.destinations d
          where d.destination = any(${names}::text[]) and d.window_started_at <= now() - ${HALF_WINDOW_MS} * interval '1 millisecond'
          order by d.destination for update) rolled
    where dispatch.destinations.destination = rolled.destination`;
  await tx.unsafe(
    `
    insert into dispatch.destinations as d (destination, attempts, failures, failure_kinds, failing_messages, latency_ms_total,
      last_error, last_status, last_error_at, last_success_at, last_attempt_at, held_until, updated_at)
    select o.destination, o.attempts, o.failures, o.kinds, o.failing, o.latency, o.last_error, o.last_status, o.last_error_at,
      o.last_success_at, o.last_attempt_at,
      case when o.hold_ms > 0 then now() + o.hold_ms * interval '1 millisecond' end, now()
    from jsonb_to_recordset($1::jsonb) as o(destination text, attempts int, failures int, kinds jsonb, failing text[],
      latency bigint, last_error text, last_status int, last_error_at timestamptz, last_success_at timestamptz,
      last_attempt_at timestamptz, hold_ms int)
    order by o.destination
    on conflict (destination) do update set
      attempts = d.attempts + excluded.attempts,
      failures = d.failures + excluded.failures,
      failure_kinds = ${mergeKinds("d.failure_kinds", "excluded.failure_kinds")},
      failing_messages = ${mergeFailing("d.failing_messages", "excluded.failing_messages")},
      latency_ms_total = d.latency_ms_total + excluded.latency_ms_total,
      last_error = coalesce(excluded.last_error, d.last_error),
      last_status = case when excluded.last_error_at is not null then excluded.last_status else d.last_status end,
      last_error_at = greatest(excluded.last_error_at, d.last_error_at),
      last_success_at = greatest(excluded.last_success_at, d.last_success_at),
      last_attempt_at = greatest(excluded.last_attempt_at, d.last_attempt_at),
      held_until = greatest(excluded.held_until, d.held_until),
      -- excluded's, not now(): Citus takes only immutable functions in DO UPDATE SET (the same instant here).
      updated_at = excluded.updated_at`,
    [tx.json(observations.map(observationRow) as never)] as never[],
  );
  return tx.unsafe<CircuitChange[]>(
    `
    with counted as (
      select d.destination, d.failures + d.previous_failures as failures, d.attempts + d.previous_attempts as attempts,
        ${mergeKinds("d.failure_kinds", "d.previous_failure_kinds")} as kinds,
        cardinality(${mergeFailing("d.failing_messages", "d.previous_failing_messages")}) as failing
      from dispatch.destinations d
      where d.destination = any($1::text[]) and d.circuit = 'CLOSED'),
    opening as (
      select c.*, (select string_agg(case when k like 'HTTP %' then n || ' × ' || k else n || ' ' || k end, ', ' order by n::int desc, k)
                   from jsonb_each_text(c.kinds) as e(k, n)) as what
      from counted c
      where c.failures >= $2::int and c.failures >= $3::float8 * c.attempts and c.failing >= $4::int)
    update dispatch.destinations t set circuit = 'OPEN', opened_at = now(), cool_down_ms = $5::int,
      probe_at = now() + $5::int * interval '1 millisecond', updated_at = now(),
      -- Immutable operators only (Citus refuses a stable function of columns, such as format(), in an UPDATE).
      open_reason = o.failures::text || ' of ' || o.attempts::text || ' attempts failed in the last minute: ' || o.what
    from opening o where t.destination = o.destination and t.circuit = 'CLOSED'
    returning t.destination, 'CLOSED' as "from", 'OPEN' as "to", t.open_reason as reason, t.probe_at as "probeAt"`,
    [names, rule.failures, rule.failureRate, rule.failingMessages, rule.coolDownMs] as never[],
  );
}

function observationRow(o: Observation) {
  return {
    destination: o.destination,
    attempts: o.attempts,
    failures: o.failures,
    kinds: o.kinds,
    failing: o.failing.slice(0, FAILING_KEPT),
    latency: Math.round(o.latencyMs),
    last_error: o.lastError,
    last_status: o.lastStatus,
    last_error_at: o.lastErrorAt?.toISOString() ?? null,
    last_success_at: o.lastSuccessAt?.toISOString() ?? null,
    last_attempt_at: o.lastAttemptAt.toISOString(),
    hold_ms: Math.round(o.holdMs),
  };
}

/**
 * The circuits' timed transitions, run by every worker about once a second
 * (each row changes for one of them): an OPEN or PROBING circuit open longer
 * than `giveUpAfterMs` gives up (not one opened by hand), its next real
 * attempt a cool-down away (`takeGaveUpAttempt`); a probe past its
 * deadline is lost and the circuit is OPEN again, to probe at once; expired
 * 429 holds are cleared. Returns the circuits that gave up or lost their probe.
 */
export async function runCircuitTimers(tx: Tx, giveUpAfterMs: number): Promise<CircuitChange[]> {
  const changes = await tx<CircuitChange[]>`
    with gave_up as (
      update dispatch.destinations d set circuit = 'GAVE_UP', probe_message_id = null, probe_deadline = null,
        probe_at = ${msFromNow(tx, "coalesce(d.cool_down_ms, 0)")}, updated_at = now()
      from (select destination, circuit from dispatch.destinations
            where circuit in ('OPEN', 'PROBING') and not opened_by_hand
              and opened_at <= now() - ${giveUpAfterMs} * interval '1 millisecond'
            for update skip locked) p
      where d.destination = p.destination
      returning d.destination, p.circuit as "from", d.circuit as "to", d.open_reason as reason, d.probe_at as "probeAt"),
    lost as (
      update dispatch.destinations d set circuit = 'OPEN', probe_message_id = null, probe_deadline = null, probe_at = now(),
        updated_at = now()
      from (select destination from dispatch.destinations
            where circuit = 'PROBING' and probe_deadline < now()
              and opened_at > now() - ${giveUpAfterMs} * interval '1 millisecond'
            for update skip locked) p
      where d.destination = p.destination
      returning d.destination, 'PROBING' as "from", d.circuit as "to", d.open_reason as reason, d.probe_at as "probeAt")
    select * from gave_up union all select * from lost`;
  const expired = await tx`update dispatch.destinations set held_until = null where held_until <= now() returning destination`;
  // A hold that ended lets its line go: the workers are woken to serve it.
  if (expired.length > 0) await tx`select pg_notify(${DUE_CHANNEL}, '')`;
  return changes;
}

/** A probe succeeded (the destination answered): its circuit closes, and its counts start again. */
export async function closeAfterProbe(tx: Tx, destination: string, probeMessageId: string): Promise<CircuitChange | null> {
  const [change] = await tx.unsafe<CircuitChange[]>(
    `update dispatch.destinations set ${CLOSED_RESET}
     where destination = $1 and circuit = 'PROBING' and probe_message_id = $2
     returning ${CHANGE_COLUMNS}, 'PROBING' as "from"`,
    [destination, probeMessageId],
  );
  return change ?? null;
}

/**
 * A probe failed (`reason`, which its change reports; the circuit keeps what
 * opened it): the circuit opens again, for twice the cool-down (at most `maxCoolDownMs`).
 */
export async function reopenAfterProbe(
  tx: Tx,
  destination: string,
  probeMessageId: string,
  reason: string,
  maxCoolDownMs: number,
): Promise<CircuitChange | null> {
  const [change] = await tx<CircuitChange[]>`
    update dispatch.destinations set circuit = 'OPEN', probe_message_id = null, probe_deadline = null,
      cool_down_ms = least(${maxCoolDownMs}::int, greatest(cool_down_ms, 1) * 2),
      probe_at = ${msFromNow(tx, `least(${maxCoolDownMs}, greatest(cool_down_ms, 1) * 2)`)},
      updated_at = now()
    where destination = ${destination} and circuit = 'PROBING' and probe_message_id = ${probeMessageId}
    returning destination, 'PROBING' as "from", circuit as "to", ${reason}::text as reason, probe_at as "probeAt"`;
  return change ?? null;
}

/**
 * Takes the one real attempt a GAVE_UP circuit makes per cool-down (the
 * cool-down doubles, up to `maxCoolDownMs`); returns when the next one is
 * due, or null when another worker took it first.
 */
export async function takeGaveUpAttempt(tx: Tx, destination: string, maxCoolDownMs: number): Promise<Date | null> {
  const [row] = await tx<{ probeAt: Date }[]>`
    update dispatch.destinations set cool_down_ms = least(${maxCoolDownMs}::int, greatest(cool_down_ms, 1) * 2),
      probe_at = ${msFromNow(tx, `least(${maxCoolDownMs}, greatest(cool_down_ms, 1) * 2)`)}, updated_at = now()
    where destination = ${destination} and circuit = 'GAVE_UP' and probe_at <= now()
    returning probe_at as "probeAt"`;
  return row?.probeAt ?? null;
}

/** A GAVE_UP circuit whose destination answered again closes. */
export async function closeGivenUp(tx: Tx, destinations: string[]): Promise<CircuitChange[]> {
  if (destinations.length === 0) return [];
  return tx.unsafe<CircuitChange[]>(
    `update dispatch.destinations set ${CLOSED_RESET}
     where destination = any($1::text[]) and circuit = 'GAVE_UP'
     returning ${CHANGE_COLUMNS}, 'GAVE_UP' as "from"`,
    [destinations] as never[],
  );
}

/** Opens a circuit by hand: it holds the destination's messages, without probes, until closed by hand. */
export async function openByHand(tx: Tx, destination: string, reason: string): Promise<CircuitChange | null> {
  const [change] = await tx<(CircuitChange & { was: CircuitState | null })[]>`
    with before as (select circuit from dispatch.destinations where destination = ${destination} for update)
    insert into dispatch.destinations as d (destination, circuit, opened_by_hand, opened_at, open_reason)
    values (${destination}, 'OPEN', true, now(), ${reason})
    on conflict (destination) do update set circuit = 'OPEN', opened_by_hand = true, opened_at = coalesce(d.opened_at, excluded.opened_at),
      open_reason = ${reason}, probe_at = null, probe_message_id = null, probe_deadline = null, updated_at = excluded.updated_at
    where not (d.circuit = 'OPEN' and d.opened_by_hand)
    returning d.destination, coalesce((select circuit from before), 'CLOSED') as "from", d.circuit as "to",
      d.open_reason as reason, d.probe_at as "probeAt"`;
  return change ?? null;
}

/** Closes a circuit by hand, whatever its state; its counts start again. Null when it was closed already. */
export async function closeByHand(tx: Tx, destination: string): Promise<CircuitChange | null> {
  const [change] = await tx.unsafe<CircuitChange[]>(
    `with before as (select destination, circuit from dispatch.destinations where destination = $1 for update)
     update dispatch.destinations d set ${CLOSED_RESET}, held_until = null
     from before b where d.destination = b.destination and b.circuit <> 'CLOSED'
     returning d.destination, b.circuit as "from", d.circuit as "to", d.open_reason as reason, d.probe_at as "probeAt"`,
    [destination],
  );
  return change ?? null;
}

/** A closed circuit's columns: nothing open, and its counts start again. */
const CLOSED_RESET = `circuit = 'CLOSED', opened_by_hand = false, opened_at = null, open_reason = null, cool_down_ms = null,
  probe_at = null, probe_message_id = null, probe_deadline = null, attempts = 0, failures = 0, failure_kinds = '{}',
  failing_messages = '{}', latency_ms_total = 0, previous_attempts = 0, previous_failures = 0, previous_failure_kinds = '{}',
  previous_failing_messages = '{}', previous_latency_ms_total = 0, window_started_at = now(), updated_at = now()`;
