/**
 * Flow control's marks on the work list (domain/flow-control/): a claimed
 * message its key admits is in flight for the key (`flow_active`, what its
 * parallelism counts) until its attempt is over; one its key cannot start is
 * held (off the list and unclaimed, parked until a release), and held
 * messages go back on the list when the key has room, now or at the moment
 * its rate window frees a slot. Each statement changes only rows still in the
 * state it starts from (work-list.ts): admitted, freed and held ones pending
 * (or, freed, cancelled) under the claim that made the attempt, released
 * ones held and pending.
 */
import type { Tx } from "../client";
import { isPending } from "../vocabulary";
import { DUE_CHANNEL } from "./work-list";

/** Counts the admitted `messages` in flight for their keys, while they are pending under their claims. */
export async function markFlowActive(tx: Tx, messages: { id: string; claimId: number }[]): Promise<void> {
  if (messages.length === 0) return;
  await tx`
    update dispatch.messages m set flow_active = true
    from unnest(${messages.map((m) => m.id)}::text[], ${messages.map((m) => m.claimId)}::bigint[]) as a(id, claim_id)
    where m.id = a.id and m.claim_id = a.claim_id and ${isPending(tx, "m.state")}`;
}

/**
 * Frees the slots of finished attempts: a message is no longer in flight for
 * its key while it is still under the claim that made the attempt (finished
 * by it or cancelled meanwhile). One re-admitted under a newer claim after a
 * sweep keeps the slot its new attempt holds.
 */
export async function freeFlowSlots(tx: Tx, attempts: { id: string; claimId: number }[]): Promise<void> {
  if (attempts.length === 0) return;
  await tx`
    update dispatch.messages m set flow_active = false
    from unnest(${attempts.map((m) => m.id)}::text[], ${attempts.map((m) => m.claimId)}::bigint[]) as f(id, claim_id)
    where m.id = f.id and m.claim_id = f.claim_id and m.flow_active`;
}

/** Holds the claimed `messages` back: off the claim, parked for a release. */
export async function holdClaimed(tx: Tx, messages: { id: string; claimId: number }[]): Promise<void> {
  if (messages.length === 0) return;
  await tx`
    update dispatch.messages m set claim_id = null, flow_parked = true
    from unnest(${messages.map((m) => m.id)}::text[], ${messages.map((m) => m.claimId)}::bigint[]) as h(id, claim_id)
    where m.id = h.id and m.claim_id = h.claim_id and ${isPending(tx, "m.state")}`;
}

/** A flow-control key: its project and name (domain/flow-control/keyed.ts). */
interface FlowKey {
  project: string;
  key: string;
}

/** Puts up to `free[i]` held messages of `keys[i]` back on the work list now, oldest first; returns how many (one NOTIFY when any). */
export async function releaseHeldNow(tx: Tx, keys: FlowKey[], free: number[]): Promise<number> {
  const [row] = await tx<{ count: number }[]>`
    with k as (
      select * from unnest(${keys.map((k) => k.project)}::text[], ${keys.map((k) => k.key)}::text[], ${free}::int[]) as k(project, key, free)
      where free > 0),
    picked as (
      select p.id from k cross join lateral (
        select m.id from dispatch.messages m
        where m.project = k.project and m.flow_control_key = k.key and m.flow_parked and ${isPending(tx, "m.state")}
        order by m.seq limit k.free for update skip locked) p),
    released as (
      update dispatch.messages m set flow_parked = false, due_at = now()
      from picked where m.id = picked.id returning m.id)
    select count(*)::int as count, case when count(*) > 0 then pg_notify(${DUE_CHANNEL}, '') end from released`;
  return row!.count;
}

/** Puts the oldest held message of `key` back on the work list for `at`, unless one of the key's messages is due by then. */
export async function releaseHeldAt(tx: Tx, { project, key }: FlowKey, at: Date): Promise<void> {
  await tx`
    update dispatch.messages m set flow_parked = false, due_at = ${at}
    where m.id = (
      select id from dispatch.messages where project = ${project} and flow_control_key = ${key} and flow_parked and ${isPending(tx)}
      order by seq limit 1 for update skip locked)
    and not exists (
      select 1 from dispatch.messages d
      where d.project = ${project} and d.flow_control_key = ${key} and d.due_at is not null and d.due_at <= ${at})`;
}

/** After a key's limits changed: its message waiting for a rate slot (due later than its next delivery) is due now. */
export async function dueNowAfterChange(tx: Tx, { project, key }: FlowKey): Promise<void> {
  await tx`
    update dispatch.messages set due_at = now()
    where project = ${project} and flow_control_key = ${key} and due_at > now() and due_at > next_delivery_at and ${isPending(tx)}`;
}
