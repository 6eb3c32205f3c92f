/**
 * Flow-control keys (docs/hosted-api.md §11): their configuration follows the
 * latest message published with them unless pinned (admin.ts changes it).
 * `keyStates` reads a key's limits, what it has in flight and the starts in
 * its rate window, locking the key's row so that the caller's decision holds
 * across replicas.
 */
import type postgres from "postgres";
import { byProject } from "../../db/citus/by-project";
import type { Tx } from "../../db/client";
import { afterKey, keyPageOf, type Page, type PageOf } from "../paging";
import { type FlowKey, sortedFlowKeys } from "./keyed";
import { type FlowControlLimits, parseFlowControl } from "./limits";

/** A key's limits and what counts against them now, by the database clock. */
export interface KeyState extends FlowControlLimits, FlowKey {
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
export async function configureKeys(tx: Tx, flows: (FlowKey & { value: string })[]): Promise<void> {
  const latest = new Map<string, FlowKey & { limits: FlowControlLimits }>();
  for (const flow of flows) {
    latest.set(`${flow.project}\u0000${flow.key}`, { project: flow.project, key: flow.key, limits: parseFlowControl(flow.key, flow.value, "")!.limits });
  }
  if (latest.size === 0) return;
  const rows = sortedFlowKeys([...latest.values()]).map((k) => latest.get(`${k.project}\u0000${k.key}`)!);
  await tx`
    insert into dispatch.flow_control_keys as k (project, key, parallelism, rate, period_ms)
    select * from unnest(${rows.map((r) => r.project)}::text[], ${rows.map((r) => r.key)}::text[],
      ${rows.map((r) => r.limits.parallelism)}::int[], ${rows.map((r) => r.limits.rate)}::int[], ${rows.map((r) => r.limits.periodMs)}::int[])
    on conflict (project, key) do update set
      parallelism = case when k.pinned_parallelism then k.parallelism else excluded.parallelism end,
      rate = case when k.pinned_rate then k.rate else excluded.rate end,
      period_ms = case when k.pinned_rate then k.period_ms else excluded.period_ms end,
      updated_at = excluded.updated_at
    where (k.parallelism, k.rate, k.period_ms) is distinct from (
      case when k.pinned_parallelism then k.parallelism else excluded.parallelism end,
      case when k.pinned_rate then k.rate else excluded.rate end,
      case when k.pinned_rate then k.period_ms else excluded.period_ms end)`;
}

/** A project's keys whose name contains `search`, ignoring case (every one of its keys for an empty search). */
export interface KeySearch {
  project: string;
  search: string;
}

/** The states of `keys` (or of the keys `KeySearch` finds), rows locked when `lock`. */
export async function keyStates(tx: Tx, keys: FlowKey[] | KeySearch, lock: boolean): Promise<KeyState[]> {
  // Project by project (db/citus/by-project.ts), keys in order within each.
  const groups = Array.isArray(keys)
    ? byProject(keys, (key) => key.project).map(([project, ofProject]) => ({ project, which: oneOf(tx, project, ofProject) }))
    : [{ project: keys.project, which: matching(tx, keys) }];
  const states: KeyState[] = [];
  for (const { project, which } of groups) {
    // Locked first, read after: a statement that waited for a lock still reads what others
    // committed meanwhile only in the locked rows, not in its subqueries (READ COMMITTED).
    if (lock) await tx`select key from dispatch.flow_control_keys k where ${which} order by key for update`;
    states.push(...(await selectKeyStates(tx, project, which, tx``)));
  }
  return states;
}

/** The rows of `keys`, all of `project`. */
function oneOf(tx: Tx, project: string, keys: FlowKey[]): postgres.Fragment {
  return tx`k.project = ${project} and k.key = any(${keys.map((k) => k.key)}::text[])`;
}

/**
 * A page of the states of the keys matching `search`, in key order: those
 * after `page.cursor` (a key). The search is checked on each key read in
 * order, so a search that matches few keys reads many for a page.
 */
export async function keyStatePage(tx: Tx, search: KeySearch, page: Page): Promise<PageOf<KeyState>> {
  const which = tx`${matching(tx, search)} and ${afterKey(tx, page.cursor, tx`k.key`)}`;
  const states = await selectKeyStates(tx, search.project, which, tx`limit ${page.count + 1}`);
  return keyPageOf(states, page.count, (state) => state.key);
}

/** The keys `search` finds. */
const matching = (tx: Tx, { project, search }: KeySearch) =>
  search === "" ? tx`k.project = ${project}` : tx`k.project = ${project} and position(lower(${search}) in lower(k.key)) > 0`;

/**
 * The states of the keys `which` picks of `project`'s, in key order (what counts against them is counted for the
 * rows returned only). The subqueries name the project as a value: on Citus a correlated subquery on the
 * project column would not be routed to the project's node.
 */
async function selectKeyStates(tx: Tx, project: string, which: postgres.Fragment, limit: postgres.Fragment): Promise<KeyState[]> {
  const rows = await tx<(Omit<KeyState, "window"> & { starts: Date[] })[]>`
    select k.project, k.key, k.parallelism, k.rate, k.period_ms as "periodMs", k.paused, k.pinned_parallelism as "pinnedParallelism",
      k.pinned_rate as "pinnedRate", now() as now, k.starts,
      (select count(*)::int from dispatch.messages m
        where m.project = ${project} and m.flow_control_key = k.key and m.flow_active) as active,
      (select count(*)::int from dispatch.messages m
        where m.project = ${project} and m.flow_control_key = k.key and m.state in ('CREATED', 'RETRY') and not m.flow_active
          and m.next_delivery_at <= now()) as waiting
    from dispatch.flow_control_keys k where ${which}
    order by k.key ${limit}`;
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
