/**
 * Why a pending message is not being delivered right now, read from the
 * engine's own columns (db/queries/work-list.ts lists who sets them): in
 * flight under a claim; waiting in a paused queue, or behind its queue's
 * parallelism (queue-admission.ts); held by its flow-control key, paused or at
 * its parallelism or rate (flow-control/admission.ts); waiting in its
 * destination's line, its circuit open or held or its share of the slots
 * taken (claim-messages.ts); waiting out a retry's backoff or a delay; or due
 * and waiting for a worker. The checks follow the order the engine applies
 * them: a claim first, then the queue (the claim passes over a paused queue's
 * messages), then the flow-control key (checked when a message is claimed),
 * then the destination's line, then time.
 */
import type { Tx } from "../../db/client";
import { isPendingState } from "../../db/vocabulary";
import { keyStates } from "../flow-control/keys";
import { flowKeyOf, isKeyed, type Keyed } from "../flow-control/keyed";
import { type LastAnswer, lastAnswer } from "./attempts";
import type { StoredMessage } from "./message";

/** What a flow-control key's hold is made of: its limits and what counts against them now. */
export interface KeyHold {
  key: string;
  /** `paused`, at its `parallelism`, at its `rate`; `releasing`: the key has room and lets it go at once. */
  reason: "paused" | "parallelism" | "rate" | "releasing";
  /** When its rate window frees a slot for it; null when nothing is scheduled (a finished delivery or a resume frees it). */
  until: Date | null;
  inFlight: number;
  parallelism: number | null;
  startedInWindow: number;
  rate: number | null;
  periodMs: number;
  /** Messages of the key held back before this one. */
  ahead: number;
}

/** What its destination's hold is made of. */
export interface DestinationHold {
  destination: string;
  /**
   * `open`: its circuit is open (until a probe, at `until`; by hand: until closed by hand);
   * `probing`: a probe is under way; `held`: a 429 asked for rest until `until`;
   * `share`: the workers hold its share of their slots, and it takes the next free one.
   */
  reason: "open" | "probing" | "held" | "share";
  until: Date | null;
  openedByHand: boolean;
  /** What opened the circuit ("12 of 12 attempts failed in the last minute: 12 timeouts"). */
  openReason: string | null;
  /** The destination's messages of this message's project waiting in the line ahead of it (other projects' are not theirs to count). */
  ahead: number;
}

/** The message's queue, and the queue named just before it (the list of queues after it starts with this one). */
export interface QueuePlace {
  queue: string;
  before: string | null;
}

/** What holds a message (`kind`), with what the page says about it. */
export type Hold =
  | { kind: "finished" }
  | { kind: "in-flight"; claimedAt: Date | null }
  | ({ kind: "paused-queue" } & QueuePlace)
  | ({ kind: "queue-parallelism"; parallelism: number; inFlight: number; ahead: number } & QueuePlace)
  | ({ kind: "flow-control" } & KeyHold)
  | ({ kind: "destination" } & DestinationHold)
  | { kind: "retry-backoff"; until: Date; attempt: number; attempts: number; last: LastAnswer | null }
  | { kind: "delayed"; until: Date }
  | { kind: "due"; since: Date }
  | { kind: "unscheduled" };

/** What holds `message` now (its row as just read, in the caller's snapshot). */
export async function holdOf(tx: Tx, message: StoredMessage): Promise<Hold> {
  if (!isPendingState(message.state)) return { kind: "finished" };
  if (message.claimId !== null && message.dueAt === null && !message.flowParked) {
    return { kind: "in-flight", claimedAt: await claimedAt(tx, message.claimId) };
  }
  const queued = message.pendingQueue === null ? null : await queueHold(tx, message);
  if (queued !== null) return queued;
  if (message.flowParked && isKeyed(message)) return { kind: "flow-control", ...(await keyHold(tx, message, null)) };
  if (message.destinationParked) return { kind: "destination", ...(await destinationHold(tx, message)) };
  if (message.dueAt === null) return { kind: "unscheduled" };
  return timeHold(tx, message, message.dueAt);
}

/** Held by time: a flow-control rate slot, a retry's backoff, a delay; or due now. */
async function timeHold(tx: Tx, message: StoredMessage, dueAt: Date): Promise<Hold> {
  const [clock] = await tx<{ now: Date }[]>`select now() as now`;
  if (dueAt <= clock!.now) return { kind: "due", since: dueAt };
  // Due later than its next delivery: put back for the moment its key's rate window frees a slot (release.ts).
  if (isKeyed(message) && dueAt > message.nextDeliveryAt) {
    return { kind: "flow-control", ...(await keyHold(tx, message, dueAt)) };
  }
  if (message.retried > 0) {
    const attempts = message.maxRetries + 1;
    return { kind: "retry-backoff", until: dueAt, attempt: message.retried + 1, attempts, last: await lastAnswer(tx, message.id) };
  }
  return { kind: "delayed", until: dueAt };
}

/** Waiting in its queue: paused, or not yet started for want of a slot; null once started in an active queue. */
async function queueHold(tx: Tx, message: StoredMessage): Promise<Hold | null> {
  const queue = message.pendingQueue!;
  const [row] = await tx<{ paused: boolean; parallelism: number; inFlight: number; ahead: number; before: string | null }[]>`
    select q.paused, q.parallelism,
      (select max(p.name) from dispatch.queues p where p.project = q.project and p.name < q.name) as before,
      (select count(*)::int from dispatch.messages m
        where m.project = q.project and m.pending_queue = q.name and m.queue_started) as "inFlight",
      (select count(*)::int from dispatch.messages m
        where m.project = q.project and m.pending_queue = q.name and not m.queue_started and m.seq < ${message.seq}) as ahead
    from dispatch.queues q where q.project = ${message.project} and q.name = ${queue}`;
  if (row === undefined) return null;
  if (row.paused) return { kind: "paused-queue", queue, before: row.before };
  if (message.queueStarted) return null;
  const { parallelism, inFlight, ahead, before } = row;
  return { kind: "queue-parallelism", queue, before, parallelism, inFlight, ahead };
}

/** The hold of the message's flow-control key: why, and how much counts against it. */
async function keyHold(tx: Tx, message: Keyed<StoredMessage>, until: Date | null): Promise<KeyHold> {
  const [state] = await keyStates(tx, [flowKeyOf(message)], false);
  const [held] = await tx<{ ahead: number }[]>`
    select count(*)::int as ahead from dispatch.messages
    where project = ${message.project} and flow_control_key = ${message.flowControlKey} and flow_parked and seq < ${message.seq}`;
  const counts = {
    inFlight: state?.active ?? 0,
    parallelism: state?.parallelism ?? null,
    startedInWindow: state?.window.length ?? 0,
    rate: state?.rate ?? null,
    periodMs: state?.periodMs ?? 1000,
  };
  return { key: message.flowControlKey, reason: keyReason(state?.paused ?? false, counts, until), until, ahead: held!.ahead, ...counts };
}

/** Why its destination's line holds it, from the destination's circuit. */
async function destinationHold(tx: Tx, message: StoredMessage): Promise<DestinationHold> {
  const destination = message.destination!;
  const [row] = await tx<(Omit<DestinationHold, "reason" | "until" | "destination"> & { circuit: string | null; probeAt: Date | null; heldUntil: Date | null })[]>`
    select d.circuit, d.probe_at as "probeAt", case when d.held_until > now() then d.held_until end as "heldUntil",
      coalesce(d.opened_by_hand, false) as "openedByHand", d.open_reason as "openReason",
      (select count(*)::int from dispatch.messages m
        where m.destination = ${destination} and m.destination_parked
          and (m.next_delivery_at, m.seq) < (select next_delivery_at, seq from dispatch.messages where id = ${message.id})
          and m.project = ${message.project}) as ahead
    from (select 1) one left join dispatch.destinations d on d.destination = ${destination}`;
  const { circuit, probeAt, heldUntil, ...rest } = row!;
  const base = { destination, ...rest };
  if (circuit === "OPEN") return { ...base, reason: "open", until: probeAt };
  if (circuit === "PROBING") return { ...base, reason: "probing", until: null };
  if (heldUntil !== null) return { ...base, reason: "held", until: heldUntil };
  return { ...base, reason: "share", until: null };
}

/** Why the key holds it: paused first, then a full parallelism, then the rate (or a rate slot it waits for). */
function keyReason(paused: boolean, counts: Omit<KeyHold, "key" | "reason" | "until" | "ahead">, until: Date | null): KeyHold["reason"] {
  if (paused) return "paused";
  if (counts.parallelism !== null && counts.inFlight >= counts.parallelism) return "parallelism";
  if (until !== null || (counts.rate !== null && counts.startedInWindow >= counts.rate)) return "rate";
  return "releasing";
}

async function claimedAt(tx: Tx, claimId: number): Promise<Date | null> {
  const [claim] = await tx<{ claimedAt: Date }[]>`select claimed_at as "claimedAt" from dispatch.claims where id = ${claimId}`;
  return claim?.claimedAt ?? null;
}
