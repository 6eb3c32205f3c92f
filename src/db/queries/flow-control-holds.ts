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
import type postgres from "postgres";
import { byProject } from "../citus/by-project";
import type { Tx } from "../client";
import { isPending } from "../vocabulary";
import { notifyDue, notifyDueAt } from "./work-list";

/** A claimed message as these statements name it: its key and the claim its attempt was made under. */
type Claimed = { id: string; project: string; claimId: number };

/**
 * Sets `assignments` on those of `messages` still under their claims and matching `guard`, project by project
 * (db/citus/by-project.ts).
 */
async function updateUnderClaims(tx: Tx, messages: Claimed[], assignments: postgres.Fragment, guard: postgres.Fragment) {
  for (const [project, ofProject] of byProject(messages, (message) => message.project)) {
    await tx`
      update dispatch.messages m set ${assignments}
      from unnest(${ofProject.map((m) => m.id)}::text[], ${ofProject.map((m) => m.claimId)}::bigint[]) as c(id, claim_id)
      where m.project = ${project} and m.id = c.id and m.claim_id = c.claim_id and ${guard}`;
  }
}

/** Counts the admitted `messages` in flight for their keys, while they are pending under their claims. */
export async function markFlowActive(tx: Tx, messages: Claimed[]): Promise<void> {
  await updateUnderClaims(tx, messages, tx`flow_active = true`, isPending(tx, "m.state"));
}

/**
 * Frees the slots of finished attempts: a message is no longer in flight for
 * its key while it is still under the claim that made the attempt (finished
 * by it or cancelled meanwhile). One re-admitted under a newer claim after a
 * sweep keeps the slot its new attempt holds.
 */
export async function freeFlowSlots(tx: Tx, attempts: Claimed[]): Promise<void> {
  await updateUnderClaims(tx, attempts, tx`flow_active = false`, tx`m.flow_active`);
}

/** Holds the claimed `messages` back: off the claim, parked for a release. */
export async function holdClaimed(tx: Tx, messages: Claimed[]): Promise<void> {
  await updateUnderClaims(tx, messages, tx`claim_id = null, flow_parked = true`, isPending(tx, "m.state"));
}

/** A flow-control key: its project and name (domain/flow-control/keyed.ts). */
interface FlowKey {
  project: string;
  key: string;
}

/** Puts up to `free[i]` held messages of `keys[i]` back on the work list now, oldest first, project by project; returns how many (one NOTIFY when any). */
export async function releaseHeldNow(tx: Tx, keys: FlowKey[], free: number[]): Promise<number> {
  let released = 0;
  const withRoom = keys.map((key, i) => ({ ...key, free: free[i]! })).filter((key) => key.free > 0);
  for (const [project, ofProject] of byProject(withRoom, (key) => key.project)) {
    const [row] = await tx<{ count: number }[]>`
      with picked as (
        select p.id from unnest(${ofProject.map((k) => k.key)}::text[], ${ofProject.map((k) => k.free)}::int[]) as k(key, free)
        cross join lateral (
          select m.id from dispatch.messages m
          where m.project = ${project} and m.flow_control_key = k.key and m.flow_parked and ${isPending(tx, "m.state")}
          order by m.seq limit k.free for update skip locked) p),
      released as (
        update dispatch.messages m set flow_parked = false, due_at = now()
        from picked where m.project = ${project} and m.id = picked.id returning m.id)
      select count(*)::int as count from released`;
    released += row!.count;
  }
  if (released > 0) await notifyDue(tx);
  return released;
}

/** Puts the oldest held message of `key` back on the work list for `at`, unless one of the key's messages is due by then. */
export async function releaseHeldAt(tx: Tx, { project, key }: FlowKey, at: Date): Promise<void> {
  const released = await tx`
    update dispatch.messages m set flow_parked = false, due_at = ${at}
    where m.project = ${project} and m.id = (
      select id from dispatch.messages where project = ${project} and flow_control_key = ${key} and flow_parked and ${isPending(tx)}
      order by seq limit 1 for update skip locked)
    and not exists (
      select 1 from dispatch.messages d
      where d.project = ${project} and d.flow_control_key = ${key} and d.due_at is not null and d.due_at <= ${at})`;
  if (released.count > 0) await notifyDueAt(tx, at);
}

/** After a key's limits changed: its message waiting for a rate slot (due later than its next delivery) is due now. */
export async function dueNowAfterChange(tx: Tx, { project, key }: FlowKey): Promise<void> {
  await tx`
    update dispatch.messages set due_at = now()
    where project = ${project} and flow_control_key = ${key} and due_at > now() and due_at > next_delivery_at and ${isPending(tx)}`;
}
