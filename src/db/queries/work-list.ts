/**
 * The engine's work list, and who moves a message on it. The work list is
 * `dispatch.messages` itself: a message is on it while its `due_at` is set,
 * held by a worker while its `claim_id` names a live claim, and finished once
 * its `state` leaves the pending ones (CREATED, RETRY). Every statement that
 * changes `due_at`, `claim_id` or `state` (or any other column of
 * `dispatch.messages`) is one of these modules, and each guards itself in
 * SQL (the row must still be in the state the transition starts from), so
 * that a cancel, a sweep or another replica that got there first wins and
 * the statement changes nothing:
 *
 * | transition | module | guard |
 * |---|---|---|
 * | published: on the list (or waiting for its queue) | insert-messages.ts | a new row |
 * | published claimed by its own process's worker: never on the list | insert-messages.ts (`insertClaimedMessageRows`) | a new row, the claim registered in the same statement |
 * | a queue starts it: on the list | start-queued-messages.ts | still waiting in that queue |
 * | claimed: off the list, under a claim | claim-messages.ts | due, SKIP LOCKED |
 * | passed over by a claim, its destination blocked: into the destination's line, unclaimed | claim-messages.ts | due, SKIP LOCKED |
 * | claimed from its destination's line | claim-messages.ts | in the line, SKIP LOCKED |
 * | claimed as its destination's probe | destination-lines.ts (`claimProbe`) | first in the line, the circuit OPEN and due a probe |
 * | stored claimed, its destination held or full: into the line | destination-lines.ts (`parkClaimed`) | pending under the claim |
 * | a failed probe: back into the line, no retry spent | destination-lines.ts (`returnProbeToLine`) | pending under the claim |
 * | delivered | record-delivered.ts | pending under the claim |
 * | retried: back on the list at the retry's time | record-retry.ts | pending under the claim |
 * | failed | record-failed.ts | pending under the claim |
 * | cancelled: off the list for good | cancel-messages.ts | pending |
 * | retried now: a retry waiting out its backoff is due at once | retry-now.ts | RETRY, on the list, due later |
 * | held by flow control: off the list, unclaimed | flow-control-holds.ts | pending under the claim |
 * | released by flow control: back on the list | flow-control-holds.ts | held and pending |
 * | handed back unattempted, or a dead worker's claim swept: back on the list | sweep-claims.ts | pending under the claim, off the list |
 *
 * Two marks beside the work list are written here too, each with its guard:
 *
 * | mark | module | guard |
 * |---|---|---|
 * | `flow_active` set: admitted, in flight for its flow-control key | flow-control-holds.ts (`markFlowActive`) | pending under the claim |
 * | `flow_active` cleared: the attempt is over (its key's slot is free) | flow-control-holds.ts (`freeFlowSlots`); sweep-claims.ts with the sweep | under the claim that made the attempt |
 * | `retried_as`, `retried_at`: the DLQ retry a failed message became | link-retries.ts | the retry exists |
 *
 * Writers that make a message due send one NOTIFY on `DUE_CHANNEL` per
 * write (the publish's insert inline, the others by `notifyDue`), its
 * payload how many milliseconds from now the earliest of them is due (empty:
 * now; `dueInMs` reads it): an idle worker sleeps until the next due time it
 * knows of. Retries are not announced (the process that recorded one wakes
 * for it itself); what a worker was not told of it finds by its poll.
 */

import type postgres from "postgres";
import type { Tx } from "../client";
import { isPending } from "../vocabulary";

/** The engine's wake-up channel: a NOTIFY on it means "something is due", now or in as many ms as its payload says. */
export const DUE_CHANNEL = "dispatch_due";

/**
 * A NOTIFY's payload for what is due `at` (SQL): empty when due now, else the
 * milliseconds until then by the database's clock, so that a worker whose
 * clock differs from the database's still wakes when the row is due.
 */
export const dueInPayload = (at: string) =>
  `case when ${at} <= now() then '' else ceil(extract(epoch from ${at} - now()) * 1000)::bigint::text end`;

/** How many ms from now a NOTIFY on `DUE_CHANNEL` says something is due (0: now; also for a payload it cannot read). */
export function dueInMs(payload: string): number {
  const ms = payload === "" ? 0 : Number(payload);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/**
 * Wakes the workers for what is due now, or in `inMs`: a NOTIFY on `DUE_CHANNEL`, in a statement of
 * its own. On Citus a NOTIFY inside a statement routed to a node would be raised on that node (and
 * refused by its two-phase commit), not on the coordinator the workers LISTEN on; the publish's
 * insert, which passes through the coordinator, keeps its NOTIFY inline (insert-messages.ts).
 */
export async function notifyDue(tx: Tx, inMs = 0): Promise<void> {
  await tx`select pg_notify(${DUE_CHANNEL}, ${inMs > 0 ? String(Math.ceil(inMs)) : ""})`;
}

/** `notifyDue` for what is due `at`, a time by the database's clock. */
export async function notifyDueAt(tx: Tx, at: Date): Promise<void> {
  await tx.unsafe(`select pg_notify($1, ${dueInPayload("$2::timestamptz")})`, [DUE_CHANNEL, at] as never[]);
}

/** A message as an outcome names it: its key (project and id) and the claim it was attempted under. */
export interface ClaimedKey {
  id: string;
  project: string;
  claimId: number;
}

/**
 * Changes the message `claimed` with `assignments`, only while it is pending
 * under its claim (the guard every outcome transition takes); false when a
 * cancel, a sweep or another replica got there first.
 */
export async function updateClaimed(tx: Tx, claimed: ClaimedKey, assignments: postgres.Fragment): Promise<boolean> {
  const changed = await tx`
    update dispatch.messages set ${assignments}
    where project = ${claimed.project} and id = ${claimed.id} and claim_id = ${claimed.claimId} and ${isPending(tx)}
    returning id`;
  return changed.length > 0;
}
