/**
 * Releasing held-back messages of flow-control keys: as many as a key may
 * start now go back on the work list (they are admitted when claimed, like
 * any due message); when the rate alone holds the rest back, the oldest is
 * put back for the moment the window frees a slot.
 */
import type { Tx } from "../../db/client";
import { releaseHeldAt, releaseHeldNow } from "../../db/queries/flow-control-holds";
import { type FlowKey, sortedFlowKeys } from "./keyed";
import { freeSlots, type KeyState, keyStates, rateMarginMs } from "./keys";

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
export async function releaseParked(tx: Tx, keys: FlowKey[]): Promise<number> {
  if (keys.length === 0) return 0;
  const states = await keyStates(tx, sortedFlowKeys(keys), true);
  const free = states.map((state) => Math.min(MAX_RELEASE, freeSlots(state)));
  const released = await releaseNow(tx, states, free);
  for (const [i, state] of states.entries()) {
    const at = rateWakeUp(state, free[i]!);
    if (at !== null) await releaseHeldAt(tx, state, at);
  }
  return released;
}

/** Releases up to `free[i]` held messages of each `states[i]` key now. */
function releaseNow(tx: Tx, states: KeyState[], free: number[]): Promise<number> {
  if (!free.some((n) => n > 0)) return Promise.resolve(0);
  return releaseHeldNow(tx, states, free);
}

/**
 * When `starting` more deliveries start now and the rate then holds the
 * key's next one back (not a pause, not its parallelism, which a finished
 * delivery frees), the moment its window frees a slot; else null.
 */
function rateWakeUp(state: KeyState, starting: number): Date | null {
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
  const keys = await tx<FlowKey[]>`
    select distinct project, flow_control_key as key from dispatch.messages where flow_parked`;
  return releaseParked(tx, keys.map(({ project, key }) => ({ project, key })));
}
