/**
 * Flow-control keys (docs/hosted-api.md §11): their configuration follows the
 * latest message published with them unless pinned; they can be paused,
 * pinned, unpinned and have their rate reset. `keyStates` reads a key's
 * limits, what it has in flight and the starts in its rate window, locking
 * the key's row so that the caller's decision holds across replicas.
 */
import type { Tx } from "../../db/client";
import { DUE_CHANNEL } from "../../db/queries/insert-messages";
import { AppError, badRequest } from "../errors";
import type { FlowControl, FlowControlLimits } from "./limits";
import { parseFlowControl } from "./limits";

/** A key's limits and what counts against them now, by the database clock. */
export interface KeyState extends FlowControlLimits {
  key: string;
  paused: boolean;
  pinnedParallelism: boolean;
  pinnedRate: boolean;
  /** The database's `now()`. */
  now: Date;
  /** Deliveries admitted and not yet recorded. */
  active: number;
  /** Start times within the rate window, oldest first. */
  window: Date[];
  /** Messages whose time has come that are not in flight: held back, or about to be claimed. */
  waiting: number;
}

/**
 * Slack added to the rate's period: an admission is counted for `period +
 * margin`, so that the delay between admitting a delivery and its request
 * reaching the destination cannot squeeze `rate + 1` arrivals into one
 * period: the request must start within half the margin (admission.ts), and
 * the other half absorbs the differences in how long requests take to
 * arrive. A tenth of the period, at most 250 ms: short periods give up to 10 %
 * of their rate, a minute 0.4 %.
 */
export const rateMarginMs = (periodMs: number) => Math.min(250, Math.round(periodMs * 0.1));

/** Records the flow control of new messages: each key takes the limits of its latest message, unless pinned. */
export async function configureKeys(tx: Tx, flows: { key: string; value: string }[]): Promise<void> {
  const latest = new Map<string, FlowControl>();
  for (const flow of flows) latest.set(flow.key, parseFlowControl(flow.key, flow.value, "")!);
  if (latest.size === 0) return;
  const rows = [...latest.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  await tx`
    insert into dispatch.flow_control_keys as k (key, parallelism, rate, period_ms)
    select * from unnest(${rows.map((r) => r.key)}::text[], ${rows.map((r) => r.limits.parallelism)}::int[],
      ${rows.map((r) => r.limits.rate)}::int[], ${rows.map((r) => r.limits.periodMs)}::int[])
    on conflict (key) do update set
      parallelism = case when k.pinned_parallelism then k.parallelism else excluded.parallelism end,
      rate = case when k.pinned_rate then k.rate else excluded.rate end,
      period_ms = case when k.pinned_rate then k.period_ms else excluded.period_ms end,
      updated_at = now()
    where (k.parallelism, k.rate, k.period_ms) is distinct from (
      case when k.pinned_parallelism then k.parallelism else excluded.parallelism end,
      case when k.pinned_rate then k.rate else excluded.rate end,
      case when k.pinned_rate then k.period_ms else excluded.period_ms end)`;
}

/** The states of `keys` (or of every key matching `search`), rows locked when `lock`. */
export async function keyStates(tx: Tx, keys: string[] | { search: string }, lock: boolean): Promise<KeyState[]> {
  const which = Array.isArray(keys)
    ? tx`k.key = any(${keys}::text[])`
    : tx`position(lower(${keys.search}) in lower(k.key)) > 0`;
  // Locked first, read after: a statement that waited for a lock still reads what others
  // committed meanwhile only in the locked rows, not in its subqueries (READ COMMITTED).
  if (lock) await tx`select key from dispatch.flow_control_keys k where ${which} order by key for update`;
  const rows = await tx<(Omit<KeyState, "window"> & { starts: Date[] })[]>`
    select k.key, k.parallelism, k.rate, k.period_ms as "periodMs", k.paused, k.pinned_parallelism as "pinnedParallelism",
      k.pinned_rate as "pinnedRate", now() as now, k.starts,
      (select count(*)::int from dispatch.messages m where m.flow_control_key = k.key and m.flow_active) as active,
      (select count(*)::int from dispatch.messages m
        where m.flow_control_key = k.key and m.state in ('CREATED', 'RETRY') and not m.flow_active
          and m.next_delivery_at <= now()) as waiting
    from dispatch.flow_control_keys k where ${which}
    order by k.key`;
  return rows.map(({ starts, ...row }) => {
    const since = row.now.getTime() - row.periodMs - rateMarginMs(row.periodMs);
    const window = starts.map((start) => new Date(start)).filter((start) => start.getTime() > since);
    return { ...row, window: window.sort((a, b) => a.getTime() - b.getTime()) };
  });
}

/** How many more deliveries the key may start now. */
export function freeSlots(state: KeyState): number {
  if (state.paused) return 0;
  const byParallelism = state.parallelism === null ? Number.POSITIVE_INFINITY : state.parallelism - state.active;
  const byRate = state.rate === null ? Number.POSITIVE_INFINITY : state.rate - state.window.length;
  return Math.max(0, Math.min(byParallelism, byRate));
}

/** Most held-back messages one release puts back on the work list, for a key without limits left to bound it. */
const MAX_RELEASE = 1000;

/**
 * Puts held-back messages of the keys back on the work list, oldest first, as
 * many as each key may start now; they are admitted when claimed, like any
 * other due message. When the rate alone holds the rest back, the oldest of
 * them is put back for the moment the window frees a slot (unless a message
 * of the key is due by then anyway), so a throttled key needs no polling: its
 * admission then releases the next ones. Takes the key rows' locks.
 */
export async function releaseParked(tx: Tx, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const states = await keyStates(tx, [...new Set(keys)].sort(), true);
  const free = states.map((state) => Math.min(MAX_RELEASE, freeSlots(state)));
  const released = await releaseNow(tx, states, free);
  for (const [i, state] of states.entries()) {
    const at = rateWakeUp(state, free[i]!);
    if (at !== null) await releaseAt(tx, state.key, at);
  }
  return released;
}

/** Releases up to `free[i]` held messages of each `states[i]` key now. */
async function releaseNow(tx: Tx, states: KeyState[], free: number[]): Promise<number> {
  if (!free.some((n) => n > 0)) return 0;
  const [row] = await tx<{ count: number }[]>`
    with k as (select * from unnest(${states.map((s) => s.key)}::text[], ${free}::int[]) as k(key, free) where free > 0),
    picked as (
      select p.id from k cross join lateral (
        select m.id from dispatch.messages m where m.flow_control_key = k.key and m.flow_parked
        order by m.seq limit k.free for update skip locked) p),
    released as (
      update dispatch.messages m set flow_parked = false, due_at = now()
      from picked where m.id = picked.id returning m.id)
    select count(*)::int as count, case when count(*) > 0 then pg_notify(${DUE_CHANNEL}, '') end from released`;
  return row!.count;
}

/** Puts the oldest held message of `key` back on the work list for `at`, unless one of the key's messages is due by then. */
async function releaseAt(tx: Tx, key: string, at: Date): Promise<void> {
  await tx`
    update dispatch.messages m set flow_parked = false, due_at = ${at}
    where m.id = (
      select id from dispatch.messages where flow_control_key = ${key} and flow_parked order by seq limit 1
      for update skip locked)
    and not exists (
      select 1 from dispatch.messages d where d.flow_control_key = ${key} and d.due_at is not null and d.due_at <= ${at})`;
}

/**
 * When `starting` more deliveries start now and the rate then holds the
 * key's next one back (not a pause, not its parallelism, which a finished
 * delivery frees), the moment its window frees a slot; else null.
 */
export function rateWakeUp(state: KeyState, starting: number): Date | null {
  if (state.paused || state.rate === null) return null;
  if (state.parallelism !== null && state.active + starting >= state.parallelism) return null;
  const window = windowAfter(state, starting);
  if (window.length < state.rate) return null;
  return new Date(window[0]!.getTime() + state.periodMs + rateMarginMs(state.periodMs) + 1);
}

/** The rate window once `starting` more deliveries start now: the latest `rate` starts. */
export function windowAfter(state: KeyState, starting: number): Date[] {
  const window = [...state.window, ...Array.from({ length: starting }, () => state.now)];
  return window.slice(Math.max(0, window.length - (state.rate ?? 0)));
}

/** Every key with held-back messages and room to start some: the safety net the maintenance task runs. */
export async function releaseAllParked(tx: Tx): Promise<number> {
  const keys = await tx<{ key: string }[]>`
    select distinct flow_control_key as key from dispatch.messages where flow_parked`;
  return releaseParked(tx, keys.map((row) => row.key));
}

/** Pauses a key (its messages wait, its rate period keeps elapsing) or resumes it. */
export async function setKeyPaused(tx: Tx, key: string, paused: boolean): Promise<void> {
  await updateKey(tx, key, tx`paused = ${paused}`);
  if (!paused) await releaseChanged(tx, key);
}

/**
 * After a key's limits changed (resume, pin, rate reset): the message waiting
 * for its rate window is due now instead, and the held ones the new limits
 * allow are released.
 */
async function releaseChanged(tx: Tx, key: string): Promise<void> {
  await tx`
    update dispatch.messages set due_at = now()
    where flow_control_key = ${key} and due_at > now() and due_at > next_delivery_at`;
  await releaseParked(tx, [key]);
}

/** Pins some limits (incoming messages no longer change them) and restarts the rate window. */
export async function pinKey(tx: Tx, key: string, pin: Partial<FlowControlLimits>): Promise<void> {
  if (pin.parallelism === undefined && pin.rate === undefined && pin.periodMs === undefined) {
    throw badRequest("pin needs parallelism, rate or period");
  }
  const byRate = pin.rate !== undefined || pin.periodMs !== undefined;
  await updateKey(
    tx,
    key,
    tx`parallelism = coalesce(${pin.parallelism ?? null}::int, parallelism),
      pinned_parallelism = pinned_parallelism or ${pin.parallelism !== undefined},
      rate = coalesce(${pin.rate ?? null}::int, rate), period_ms = coalesce(${pin.periodMs ?? null}::int, period_ms),
      pinned_rate = pinned_rate or ${byRate}, starts = '{}'`,
  );
  await releaseChanged(tx, key);
}

/** Unpins limits: they stay as they are until a message brings others. */
export async function unpinKey(tx: Tx, key: string, unpin: { parallelism: boolean; rate: boolean }): Promise<void> {
  await updateKey(
    tx,
    key,
    tx`pinned_parallelism = pinned_parallelism and not ${unpin.parallelism}, pinned_rate = pinned_rate and not ${unpin.rate}`,
  );
}

/** Forgets the rate window's starts: the period begins again now. */
export async function resetKeyRate(tx: Tx, key: string): Promise<void> {
  await updateKey(tx, key, tx`starts = '{}'`);
  await releaseChanged(tx, key);
}

async function updateKey(tx: Tx, key: string, set: ReturnType<Tx>): Promise<void> {
  const [row] = await tx`update dispatch.flow_control_keys set ${set}, updated_at = now() where key = ${key} returning key`;
  if (!row) throw new AppError(404, `flow control key ${key} not found`);
}
