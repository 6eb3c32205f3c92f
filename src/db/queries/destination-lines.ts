/**
 * A destination's line: its due messages that wait for it, off the work list
 * and unclaimed (`destination_parked`), while its circuit is open or held, or
 * while the workers hold its share of their slots (`claim-messages.ts` parks
 * what it passes over and serves the lines). The line runs in the order the
 * messages fell due, then in the order they were published (`seq`): retries
 * recorded by one statement share their `next_delivery_at`. Each statement
 * changes only rows still in the state it starts from (work-list.ts).
 */
import { byProject } from "../citus/by-project";
import type { Tx } from "../client";
import { messageColumnList } from "../message-columns";
import { isPending, pendingSql } from "../vocabulary";
import type { ClaimedMessage } from "./claim-messages";
import type { ClaimedKey } from "./work-list";

/** Claimed messages this worker will not attempt (their destination is held or full) join their destination's line. */
export async function parkClaimed(tx: Tx, messages: ClaimedKey[]): Promise<void> {
  for (const [project, ofProject] of byProject(messages, (message) => message.project)) {
    await tx`
      update dispatch.messages m set claim_id = null, destination_parked = true
      from unnest(${ofProject.map((m) => m.id)}::text[], ${ofProject.map((m) => m.claimId)}::bigint[]) as p(id, claim_id)
      where m.project = ${project} and m.id = p.id and m.claim_id = p.claim_id and m.due_at is null and not m.flow_parked
        and ${isPending(tx, "m.state")}`;
  }
}

/**
 * A failed probe: the message goes back to the front of its destination's
 * line without spending a retry (the failure was the destination's); false
 * when a cancel or a sweep got there first.
 */
export async function returnProbeToLine(tx: Tx, probe: ClaimedKey): Promise<boolean> {
  const changed = await tx`
    update dispatch.messages set claim_id = null, destination_parked = true
    where project = ${probe.project} and id = ${probe.id} and claim_id = ${probe.claimId} and due_at is null and not flow_parked
      and ${isPending(tx)}
    returning id`;
  return changed.length > 0;
}

/**
 * Takes the probe of one OPEN circuit whose cool-down is over (not one opened
 * by hand): the oldest message in its line is claimed for `workerId` and the
 * circuit becomes PROBING until the probe's outcome, or until its deadline (the
 * message's timeout, or `defaultTimeoutMs`, plus `graceMs`) passes with none.
 * Null when no circuit is ready or its line is empty.
 */
export async function claimProbe(
  tx: Tx,
  workerId: string,
  defaultTimeoutMs: number,
  graceMs: number,
): Promise<ClaimedMessage | null> {
  const [probe] = await tx.unsafe<ClaimedMessage[]>(
    `
    with d as (
      select d.destination from dispatch.destinations d
      where d.circuit = 'OPEN' and not d.opened_by_hand and d.probe_at <= now()
      order by d.probe_at limit 1
      for update skip locked),
    picked as (
      select x.id, x.timeout_ms, d.destination from d cross join lateral (
        select m.id, m.timeout_ms from dispatch.messages m
        where m.destination = d.destination and m.destination_parked and ${pendingSql("m.state")}
        order by m.next_delivery_at, m.seq limit 1
        for update of m skip locked) x),
    claim as materialized (select nextval('dispatch.claims_id_seq') as id where exists (select 1 from picked)),
    claimed as (
      update dispatch.messages m set destination_parked = false, claim_id = claim.id
      from picked, claim where m.id = picked.id
      returning ${messageColumnList("m")}),
    probing as (
      update dispatch.destinations t set circuit = 'PROBING', probe_message_id = p.id, updated_at = now(),
        probe_deadline = now() + (coalesce(p.timeout_ms, $2::int) + $3::int) * interval '1 millisecond'
      from picked p where t.destination = p.destination),
    registered as (
      insert into dispatch.claims (id, worker_id, message_ids) overriding system value
      select claim.id, $1, array(select id from claimed) from claim)
    select * from claimed`,
    [workerId, defaultTimeoutMs, graceMs] as never[],
  );
  return probe ?? null;
}

/**
 * `claimProbe` on Citus, in steps: the circuit's row locked (a reference
 * table, a copy on each node); its line's oldest message found across the
 * projects (a read of every node, unlocked); that message claimed by a
 * statement routed to its project's node, which takes it only while it still
 * waits in the line (else no probe this round: the next takes the new
 * oldest); then the circuit set PROBING and the claim registered beside
 * the message, on its project's node. The claim id is taken first: Citus
 * refuses `nextval()` in an UPDATE of a distributed table.
 */
export async function claimProbeAcrossProjects(
  tx: Tx,
  workerId: string,
  defaultTimeoutMs: number,
  graceMs: number,
): Promise<ClaimedMessage | null> {
  const [circuit] = await tx<{ destination: string }[]>`
    select d.destination from dispatch.destinations d
    where d.circuit = 'OPEN' and not d.opened_by_hand and d.probe_at <= now()
    order by d.probe_at limit 1
    for update skip locked`;
  if (!circuit) return null;
  const [oldest] = await tx<{ project: string; id: string }[]>`
    select m.project, m.id from dispatch.messages m
    where m.destination = ${circuit.destination} and m.destination_parked and ${isPending(tx, "m.state")}
    order by m.next_delivery_at, m.seq limit 1`;
  if (!oldest) return null;
  const [claim] = await tx<{ id: number }[]>`select nextval('dispatch.claims_id_seq') as id`;
  const [probe] = await tx.unsafe<ClaimedMessage[]>(
    `update dispatch.messages m set destination_parked = false, claim_id = $1
    where m.project = $2 and m.id = $3 and m.destination_parked and ${pendingSql("m.state")}
    returning ${messageColumnList("m")}`,
    [claim!.id, oldest.project, oldest.id] as never[],
  );
  if (!probe) return null;
  await tx`
    update dispatch.destinations set circuit = 'PROBING', probe_message_id = ${probe.id}, updated_at = now(),
      probe_deadline = now() + ${(probe.timeoutMs ?? defaultTimeoutMs) + graceMs} * interval '1 millisecond'
    where destination = ${circuit.destination}`;
  await tx`
    insert into dispatch.claims (id, project, worker_id, message_ids) overriding system value
    values (${claim!.id}, ${probe.project}, ${workerId}, ${[probe.id]})`;
  return probe;
}
