/**
 * Destinations as operators see them (the API's `/v2/destinations`, the
 * dashboard): each one's circuit, what it holds now — requests in flight, due
 * messages, messages waiting in its line — and its last minute of attempts.
 * Paged by name (`afterKey`); the counts are read for the page's
 * destinations only: waiting through `messages_destination_parked_idx`, in
 * flight through the live claims, due through the work list's index.
 */
import type { Tx } from "../../db/client";
import { destinationOf } from "../../db/destination";
import { CIRCUIT_STATES, type CircuitState, pendingSql } from "../../db/vocabulary";
import { badRequest } from "../errors";
import { afterKey, keyPageOf, type Page, type PageOf } from "../paging";

/** A destination and its health. */
export interface Destination {
  destination: string;
  circuit: CircuitState;
  openedByHand: boolean;
  openedAt: Date | null;
  openReason: string | null;
  /** When an OPEN circuit's next probe may start. */
  probeAt: Date | null;
  /** When an OPEN or PROBING circuit gives up, unless a probe closes it first (none when opened by hand). */
  giveUpAt: Date | null;
  /** Until when a 429 holds it. */
  heldUntil: Date | null;
  /** Attempts and failures in the last minute (between 30 and 60 s of them), failures by kind, average time to answer. */
  attempts: number;
  failures: number;
  failureKinds: Record<string, number>;
  averageMs: number | null;
  lastError: string | null;
  lastStatus: number | null;
  lastErrorAt: Date | null;
  lastSuccessAt: Date | null;
  lastAttemptAt: Date | null;
  /** Requests in flight now, messages due now, messages waiting in its line. */
  inFlight: number;
  due: number;
  waiting: number;
}

/** Which destinations: those whose circuit is in `circuit` (all when null). */
export interface DestinationFilter {
  circuit: CircuitState | null;
}

/** The destination a request names: an origin, or any URL of it (its path is ignored). */
export function parseDestination(text: string): string {
  const trimmed = text.trim();
  if (!/^https?:\/\/[^/]/i.test(trimmed)) throw badRequest(`a destination is an origin such as https://example.com, got "${text}"`);
  const origin = destinationOf(trimmed);
  if (origin === trimmed && !URL.canParse(trimmed)) throw badRequest(`"${text}" is not a valid URL`);
  return origin;
}

/** A circuit state as a filter accepts it. */
export function parseCircuit(text: string | undefined): CircuitState | null {
  if (text === undefined || text === "") return null;
  const state = text.toUpperCase();
  if (!(CIRCUIT_STATES as readonly string[]).includes(state)) throw badRequest(`circuit must be one of ${CIRCUIT_STATES.join(", ")}`);
  return state as CircuitState;
}

/** A page of destinations by name. */
export async function listDestinations(
  tx: Tx,
  filter: DestinationFilter,
  page: Page,
  giveUpAfterMs: number,
): Promise<PageOf<Destination>> {
  const rows = await tx<Omit<Destination, "inFlight" | "due" | "waiting">[]>`
    select ${columns(tx, giveUpAfterMs)} from dispatch.destinations d
    where ${afterKey(tx, page.cursor, tx`d.destination`)} and ${filter.circuit === null ? tx`true` : tx`d.circuit = ${filter.circuit}`}
    order by d.destination limit ${page.count + 1}`;
  const result = keyPageOf(rows, page.count, (row) => row.destination);
  return { items: await withCounts(tx, result.items), cursor: result.cursor };
}

/** One destination, or null when no attempt was ever made to it and no circuit set by hand. */
export async function findDestination(tx: Tx, destination: string, giveUpAfterMs: number): Promise<Destination | null> {
  const rows = await tx<Omit<Destination, "inFlight" | "due" | "waiting">[]>`
    select ${columns(tx, giveUpAfterMs)} from dispatch.destinations d where d.destination = ${destination}`;
  const [found] = await withCounts(tx, rows);
  return found ?? null;
}

function columns(tx: Tx, giveUpAfterMs: number) {
  return tx`
    d.destination, d.circuit, d.opened_by_hand as "openedByHand", d.opened_at as "openedAt", d.open_reason as "openReason",
    d.probe_at as "probeAt", d.held_until as "heldUntil",
    case when d.circuit in ('OPEN', 'PROBING') and not d.opened_by_hand
      then d.opened_at + ${giveUpAfterMs} * interval '1 millisecond' end as "giveUpAt",
    (d.attempts + d.previous_attempts) as attempts, (d.failures + d.previous_failures) as failures,
    coalesce((select jsonb_object_agg(k, n) from (
      select key as k, sum(value::int)::int as n
      from (select * from jsonb_each_text(d.failure_kinds) union all select * from jsonb_each_text(d.previous_failure_kinds)) e
      group by key) s), '{}') as "failureKinds",
    case when d.attempts + d.previous_attempts > 0
      then ((d.latency_ms_total + d.previous_latency_ms_total) / (d.attempts + d.previous_attempts))::int end as "averageMs",
    d.last_error as "lastError", d.last_status as "lastStatus", d.last_error_at as "lastErrorAt",
    d.last_success_at as "lastSuccessAt", d.last_attempt_at as "lastAttemptAt"`;
}

/** The rows with what each destination holds now. */
async function withCounts(tx: Tx, rows: Omit<Destination, "inFlight" | "due" | "waiting">[]): Promise<Destination[]> {
  if (rows.length === 0) return [];
  const names = rows.map((row) => row.destination);
  // The claims first, then their messages: a one-server claim names no project, and on Citus a statement
  // joining two distributed tables must join them on it.
  const claimed = await tx<{ id: number; messageIds: string[] }[]>`select id, message_ids as "messageIds" from dispatch.claims`;
  const counts = await tx<{ destination: string; inFlight: number; due: number; waiting: number }[]>`
    with names as (select unnest(${names}::text[]) as destination),
    in_flight as (
      select m.destination, count(*)::int as n
      from unnest(${claimed.flatMap((claim) => claim.messageIds.map(() => claim.id))}::bigint[],
        ${claimed.flatMap((claim) => claim.messageIds)}::text[]) as c(claim_id, id)
        join dispatch.messages m on m.id = c.id
      where m.claim_id = c.claim_id and m.due_at is null and not m.flow_parked and m.destination = any(${names}::text[])
        and ${tx.unsafe(pendingSql("m.state"))}
      group by m.destination),
    due as (
      select m.destination, count(*)::int as n from dispatch.messages m
      where m.due_at <= now() and m.destination = any(${names}::text[]) group by m.destination),
    waiting as (
      select m.destination, count(*)::int as n from dispatch.messages m
      where m.destination_parked and m.destination = any(${names}::text[]) group by m.destination)
    select n.destination, coalesce(f.n, 0) as "inFlight", coalesce(d.n, 0) as due, coalesce(w.n, 0) as waiting
    from names n left join in_flight f using (destination) left join due d using (destination) left join waiting w using (destination)`;
  const byName = new Map(counts.map((count) => [count.destination, count]));
  return rows.map((row) => {
    const count = byName.get(row.destination)!;
    return { ...row, inFlight: count.inFlight, due: count.due, waiting: count.waiting };
  });
}

/** Removes the rows of destinations idle for `idleMs`: closed, unheld, nothing in their line. Returns how many. */
export async function forgetIdleDestinations(tx: Tx, idleMs: number): Promise<number> {
  const idle = tx`d.circuit = 'CLOSED' and d.held_until is null
    and coalesce(d.last_attempt_at, d.updated_at) < now() - ${idleMs} * interval '1 millisecond'`;
  // Read, then deleted by name: on Citus `destinations` is a reference table, which a statement that also
  // reads the messages' shards may not change.
  const candidates = (await tx<{ destination: string }[]>`select d.destination from dispatch.destinations d where ${idle}`).map(
    (row) => row.destination,
  );
  if (candidates.length === 0) return 0;
  const lined = await tx<{ destination: string }[]>`
    select distinct m.destination from dispatch.messages m where m.destination_parked and m.destination = any(${candidates}::text[])`;
  const keep = new Set(lined.map((row) => row.destination));
  const doomed = candidates.filter((destination) => !keep.has(destination));
  const removed = await tx`delete from dispatch.destinations d where d.destination = any(${doomed}::text[]) and ${idle}`;
  return removed.count;
}

/** How many destinations hold their messages back now, by circuit state (`HELD`: closed, but a 429 holds it). */
export async function holdingCounts(tx: Tx): Promise<Record<string, number>> {
  const rows = await tx<{ state: string; n: number }[]>`
    select case when d.circuit = 'CLOSED' then 'HELD' else d.circuit end as state, count(*)::int as n
    from dispatch.destinations d
    where (d.circuit <> 'CLOSED' or d.held_until is not null) and (d.circuit <> 'CLOSED' or d.held_until > now())
    group by 1`;
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}
