/**
 * Flow-control admission (docs/hosted-api.md §11), in the engine's claim
 * path: a claimed message with a flow-control key is attempted only if its
 * key may start another delivery — fewer than `parallelism` in flight, fewer
 * than `rate` started in the last `period` (a sliding window), not paused.
 * The key rows are locked while deciding, so the limits hold across every
 * worker process.
 *
 * What may not start now costs no polling: it leaves the work list
 * (`flow_parked`) until a finished delivery of its key frees a slot
 * (`releaseDeliveries`), or, when only the rate holds it back, until the
 * moment its window frees a slot (`releaseParked`, release.ts). Resume, pin
 * and a rate reset release what may start; the maintenance task runs
 * `releaseAllParked` as a safety net.
 */
import type { ClaimedMessage } from "../../db/queries/claim-messages";
import { freeFlowSlots, holdClaimed, markFlowActive } from "../../db/queries/flow-control-holds";
import type { Sql, Tx } from "../../db/client";
import { releaseClaimedMessages } from "../../db/queries/sweep-claims";
import { type FlowKey, flowKeyOf, isKeyed, type Keyed, sameFlowKey, sortedFlowKeys } from "./keyed";
import { freeSlots, keyStates, rateMarginMs } from "./keys";
import { releaseParked, windowAfter } from "./release";

/** What admission decided for a claim's keyed messages. */
export interface Admission {
  /** To attempt now. */
  admitted: Keyed<ClaimedMessage>[];
  /** Handed back: held until their key lets them go. */
  held: Keyed<ClaimedMessage>[];
  /**
   * For admitted messages of rate-limited keys: how long after the admission
   * their request must start, or not at all (the worker withdraws the
   * admission). The rate window counts each admission for its period plus a
   * margin; half of it bounds when the request starts, the other half how
   * much longer one request may take than another to reach the destination,
   * so the destination sees the rate kept.
   */
  startWithinMs: Map<string, number>;
  /**
   * For the same messages: the start their key's window counted, stamped as
   * the admission ends (the database's clock_timestamp()), so the time the
   * transaction took does not eat into `startWithinMs`.
   */
  admittedAt: Map<string, Date>;
}

/** Admits what the keys of `claimed` allow (all claimed by the caller). */
export function admitClaimed(sql: Sql, claimed: Keyed<ClaimedMessage>[]): Promise<Admission> {
  return sql.begin(async (tx) => {
    const keys = sortedFlowKeys(claimed.map(flowKeyOf));
    const states = await keyStates(tx, keys, true);
    const admission: Admission = { admitted: [], held: [], startWithinMs: new Map(), admittedAt: new Map() };
    for (const key of keys) {
      const state = states.find((s) => sameFlowKey(s, key));
      const candidates = claimed.filter((message) => sameFlowKey(flowKeyOf(message), key));
      // A key with no row was configured by no message: it has no limits.
      const free = state ? freeSlots(state) : candidates.length;
      admission.admitted.push(...candidates.slice(0, free));
      admission.held.push(...candidates.slice(free));
      if (state?.rate == null) continue;
      const admitted = candidates.slice(0, free);
      const at = await saveWindow(tx, key, windowAfter(state, admitted.length).slice(0, -admitted.length || undefined), admitted.length);
      for (const message of admitted) {
        admission.startWithinMs.set(message.id, rateMarginMs(state.periodMs) / 2);
        admission.admittedAt.set(message.id, at);
      }
    }
    await record(tx, admission);
    // Room left over releases held messages; a key its rate holds back is woken when its window frees a slot.
    await releaseParked(tx, keys);
    return admission;
  });
}

/**
 * Takes back the admission of a message whose request could not start in
 * time: it goes back on the work list to be admitted again, and the start its
 * key's rate window counted for it at `admittedAt` is forgotten.
 */
export async function withdrawAdmission(sql: Sql, message: Keyed<ClaimedMessage>, admittedAt: Date): Promise<void> {
  await sql.begin(async (tx) => {
    await releaseClaimedMessages(tx, [{ messageId: message.id, claimId: message.claimId }]);
    const { project, key } = flowKeyOf(message);
    await tx`select key from dispatch.flow_control_keys where project = ${project} and key = ${key} for update`;
    const at = admittedAt.toISOString();
    // One occurrence of `at` goes: the starts of a batch admitted together are equal.
    await tx`
      update dispatch.flow_control_keys set starts = (
        select coalesce(array_agg(s order by n), '{}') from unnest(starts) with ordinality as w(s, n)
        where n <> coalesce((select min(v.n) from unnest(starts) with ordinality as v(s, n) where v.s = ${at}::timestamptz), 0))
      where project = ${project} and key = ${key}`;
    await releaseParked(tx, [{ project, key }]);
  });
}

/**
 * Records that the attempts of `messages` (claimed; those with keys count)
 * are over: they no longer count as in flight under the claims that made
 * them, and their keys release what may start now.
 */
export async function releaseDeliveries(tx: Tx, messages: ClaimedMessage[]): Promise<void> {
  const keyed = messages.filter(isKeyed);
  if (keyed.length === 0) return;
  await freeFlowSlots(tx, keyed.map((message) => ({ id: message.id, project: message.project, claimId: message.claimId })));
  await releaseParked(tx, keyed.map(flowKeyOf));
}

async function record(tx: Tx, { admitted, held }: Admission): Promise<void> {
  await markFlowActive(tx, admitted.map((message) => ({ id: message.id, project: message.project, claimId: message.claimId })));
  await holdClaimed(tx, held.map((message) => ({ id: message.id, project: message.project, claimId: message.claimId })));
}

/** Sets the key's window to `kept` plus `added` starts stamped now (clock_timestamp()); returns that stamp. */
async function saveWindow(tx: Tx, { project, key }: FlowKey, kept: Date[], added: number): Promise<Date> {
  const starts = kept.map((start) => start.toISOString());
  const [row] = await tx<{ at: Date }[]>`
    with t as (select clock_timestamp() as at)
    update dispatch.flow_control_keys set starts = ${starts}::timestamptz[] || array_fill(t.at, array[${added}::int])
    from t where project = ${project} and key = ${key}
    returning t.at`;
  return row!.at;
}
