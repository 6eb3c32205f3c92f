/**
 * The delivery engine's loop in one worker process: claim due messages
 * (`claim-messages.ts`), attempt each, record the outcomes in batches.
 *
 * Claimed messages with a flow-control key are attempted only as their key
 * admits them (domain/flow-control/admission.ts).
 *
 * It claims when it has free capacity and is woken by a NOTIFY on the due
 * channel (publishes, queue starts, sweeps: now, or at the due time it
 * names), by a finished attempt while it was full, by its own retries coming
 * due, and otherwise polls: every `pollIntervalMs` while claims find work,
 * the wait doubling after each that finds none up to `idlePollIntervalMs`,
 * and never past the work list's next due time (`nextDueInMs`). So an idle
 * worker costs the database a look a second, not twenty, and a delayed
 * message is still claimed when it comes due. When full, it waits for a
 * handful of free slots so that claims stay batches.
 *
 * Its slots are shared among destinations (`destination-slots.ts`): each
 * claim asks for no more of a destination than the worker has room for, and
 * parks what it passes over of destinations that have none (claim-messages.ts);
 * a claim that parked goes again at once, reading further, so a blocked
 * backlog is set aside in a few rounds and costs nothing afterwards. Every
 * attempt is counted for its destination's health (`destination-health.ts`),
 * and a circuit's probe is taken here when one is due.
 *
 * It is also this process's `LocalDelivery`: publishes store immediate
 * messages already claimed by it (domain/publish/local-delivery.ts), in slots
 * it lends only while the work list had nothing more for it at its last claim
 * and no NOTIFY came since, and never the last `minClaim` ones, so the work
 * list is never starved by local publishes. Such a message whose destination
 * is held or full joins the destination's line instead of being attempted.
 */
import type { DatabaseAvailability } from "../db/availability";
import type { Listener, Sql } from "../db/client";
import { ClaimIds, claimByProject } from "../db/queries/claim-by-project";
import { type ClaimedMessage, claimMessages } from "../db/queries/claim-messages";
import { nextDueInMs } from "../db/queries/next-due";
import { DUE_CHANNEL, dueInMs } from "../db/queries/work-list";
import { parkClaimed } from "../db/queries/destination-lines";
import { releaseClaimedMessages, releaseUnknownClaims } from "../db/queries/sweep-claims";
import { destinationOf } from "../db/destination";
import type { AttemptRecord } from "../domain/delivery/outcome";
import { type DeliverDeps, deliverClaimed } from "./deliver";
import type { LocalDelivery } from "../domain/publish/local-delivery";
import { admitClaimed, withdrawAdmission } from "../domain/flow-control/admission";
import { isKeyed, type Keyed } from "../domain/flow-control/keyed";
import type { Log } from "../observability/log";
import type { Metrics } from "../observability/metrics";
import type { DestinationHealth } from "./destination-health";
import type { DestinationSlots, SlotTicket } from "./destination-slots";
import type { Recorder } from "./recorder";
import { WakeableLoop } from "./wakeable-loop";

/** How long keyed messages whose admission failed wait before they are claimed again. */
const ADMISSION_RETRY_MS = 1000;
/** A wait at least this long first asks when the next message comes due (`idleWait`). */
const ASK_BEFORE_WAITING_MS = 1000;
/** Most due messages one claim reads beyond its limit to park those of blocked destinations. */
const MAX_PASS = 2048;

/** When an admitted rate-limited request must start by (epoch ms), and the start its key's window counted. */
interface Start {
  by: number;
  admittedAt: Date;
  message: Keyed<ClaimedMessage>;
}

/** What the loop works with. */
export interface ClaimerDeps {
  sql: Sql;
  /** Where the loop LISTENs for due messages (the direct connection). */
  listener: Listener;
  availability: DatabaseAvailability;
  recorder: Recorder;
  /** What an attempt needs (deliver.ts's `deliverClaimed`, which the loop calls for each message it takes). */
  deliver: DeliverDeps;
  /** How the slots are shared among destinations. */
  slots: DestinationSlots;
  /** The destinations' circuits and this worker's counts of their attempts. */
  health: DestinationHealth;
  /** Hears each message this worker failed for good (the DLQ's watch). */
  failedForGood: () => void;
  /** Registered lock holder under which claims are taken (its heartbeat keeps them). */
  workerId: string;
  /** Whether the tables are distributed over a Citus cluster: claims are then taken project by project. */
  distributed: boolean;
  concurrency: number;
  pollIntervalMs: number;
  idlePollIntervalMs: number;
  metrics: Metrics;
  log: Log;
}

/** Claims and delivers until stopped. */
export class Claimer implements LocalDelivery {
  private inFlight = 0;
  /** Whether the last claim took less than it asked for and no NOTIFY came since: the work list has nothing due. */
  private drained = false;
  /** Whether a claim failed since the last check: it may have committed unseen. */
  private unsure = false;
  /** Publishes' inserts under way in slots this worker lent (`reserve`): each may register a claim not yet known. */
  private localInserts = 0;
  private readonly running = new Set<Promise<void>>();
  private readonly loop: WakeableLoop;
  /** Claims wait for this many free slots while the worker is busy. */
  private readonly minClaim: number;
  /** How far past its limit the next claim reads: set after a claim parked messages, to set a blocked backlog aside fast. */
  private pass = 0;
  /**
   * Destinations with messages waiting for room at the last claim (a line, or due messages it left
   * for want of room), and those this worker just parked into: a freed slot of one claims again.
   */
  private waitingForRoom = new Set<string>();
  /** Claims in a row that took nothing: the poll's wait doubles with each (`idleWait`). */
  private emptyClaims = 0;
  /** Citus: which project the next claim starts from (`claimByProject`). */
  private turn = 0;
  /** Citus: the ids the claims run under (`claimByProject`). */
  private readonly claimIds = new ClaimIds();

  constructor(private readonly deps: ClaimerDeps) {
    this.minClaim = Math.max(1, Math.min(16, Math.floor(deps.concurrency / 16)));
    this.loop = new WakeableLoop(deps.listener, DUE_CHANNEL);
  }

  /** Starts listening and claiming. */
  async start(): Promise<void> {
    await this.loop.start(
      () => this.round(),
      (payload) => {
        const inMs = dueInMs(payload);
        if (inMs > 0) return Date.now() + inMs;
        this.drained = false;
        return true;
      },
    );
  }

  get workerId(): string {
    return this.deps.workerId;
  }

  get claimsByProject(): boolean {
    return this.deps.distributed;
  }

  reserve(count: number): number {
    // While unsure, nothing is lent: the claims this worker does not know of are released once
    // no insert that may register one is under way (see `claim`).
    if (!this.drained || this.unsure || this.loop.stopped) return 0;
    const slots = Math.max(0, Math.min(count, this.deps.concurrency - this.inFlight - this.minClaim));
    if (slots === 0) return 0;
    this.inFlight += slots;
    this.localInserts++;
    return slots;
  }

  abandon(reserved: number): void {
    this.unsure = true;
    this.localInserts--;
    this.freeSlots(reserved);
  }

  deliver(messages: ClaimedMessage[], reserved: number): void {
    this.localInserts--;
    if (messages.length < reserved) this.freeSlots(reserved - messages.length);
    if (messages.length === 0) return;
    this.deps.recorder.claimed(messages);
    this.deps.metrics.claimedAtPublish.inc(messages.length);
    // Stored while the worker stopped: back to the work list, for whichever process runs on.
    if (this.loop.stopped) return void messages.forEach((message) => this.track(this.handBackFromSlot(message)));
    const waiting: ClaimedMessage[] = [];
    for (const message of messages) {
      const destination = destinationKey(message);
      if (this.deps.health.holds(destination) || this.deps.slots.room(destination) === 0) waiting.push(message);
      else this.track(this.attemptInSlot(message));
    }
    if (waiting.length > 0) this.track(this.parkInLine(waiting, true));
  }

  /** Stops claiming and waits for the attempts in flight (the caller aborts them if it must). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all(this.running);
  }

  /** Wakes the loop now; `at` wakes it at that time instead (a retry of this process coming due). */
  wake(at?: number): void {
    if (at === undefined) this.loop.wake();
    else this.loop.wakeAt(at);
  }

  /**
   * Takes a due probe, then claims what fits; a full claim, one that parked
   * messages, or one that took some but left a project's due messages unread
   * (its turn was up), goes again at once; anything less waits for a wake or the poll.
   */
  private async round(): Promise<number | null> {
    if (this.deps.concurrency - this.inFlight >= 1 && this.deps.health.probeDue()) await this.probe();
    const free = this.deps.concurrency - this.inFlight;
    if (free < this.minClaim) {
      this.emptyClaims = 0;
      return this.deps.pollIntervalMs;
    }
    const { claimed, parked, more } = await this.claim(free);
    this.emptyClaims = claimed > 0 || parked > 0 ? 0 : this.emptyClaims + 1;
    const again = (claimed === free && claimed > 0) || parked > 0 || (more && claimed > 0);
    return again ? null : this.idleWait();
  }

  /**
   * The poll's wait after a claim that left nothing due: `pollIntervalMs`
   * after one that took something, doubling with each empty one in a row up
   * to `idlePollIntervalMs`. After an empty claim, or before a wait of a
   * second or more, it asks when the next message comes due, and the loop
   * wakes then (on a database error, the wait stands): a claim that took
   * something is soon followed by another while the poll is short.
   */
  private async idleWait(): Promise<number> {
    const { pollIntervalMs, idlePollIntervalMs } = this.deps;
    const wait = Math.min(idlePollIntervalMs, pollIntervalMs * 2 ** Math.min(Math.max(0, this.emptyClaims - 1), 16));
    if (this.emptyClaims === 0 && wait < ASK_BEFORE_WAITING_MS) return wait;
    try {
      const inMs = await nextDueInMs(this.deps.sql, this.deps.distributed);
      if (inMs !== null && inMs < wait) this.loop.wakeAt(Date.now() + inMs);
    } catch (error) {
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: reading the next due time failed: ${(error as Error).message}`);
    }
    return wait;
  }

  /**
   * Claims up to `limit` messages and starts their attempts; returns how
   * many. A claim that failed may still have committed (the answer lost with
   * the connection): before claiming again, the claims this worker does not
   * know of are released.
   */
  private async claim(limit: number): Promise<{ claimed: number; parked: number; more: boolean }> {
    let messages: ClaimedMessage[];
    let parked: number;
    let more: boolean;
    // A claim an insert under way registered is not known yet: releasing now would put its
    // messages back on the list while they are attempted. `reserve` lends nothing while unsure,
    // so the inserts under way end within a statement; the next round releases.
    if (this.unsure && this.localInserts > 0) return { claimed: 0, parked: 0, more: false };
    try {
      if (this.unsure) await this.releaseUnknown();
      let waiting: string[];
      const room = this.deps.slots.claimRoom(limit, this.pass);
      ({ messages, parked, waiting, more } = this.deps.distributed
        ? await claimByProject(this.deps.sql, this.deps.workerId, room, this.turn++, this.claimIds)
        : await claimMessages(this.deps.sql, this.deps.workerId, room));
      this.waitingForRoom = new Set(waiting);
    } catch (error) {
      this.unsure = true;
      this.drained = false;
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: claim failed: ${(error as Error).message}`);
      await this.deps.availability.whenUp();
      return { claimed: 0, parked: 0, more: false };
    }
    this.pass = parked > 0 ? Math.min(MAX_PASS, Math.max(limit, parked * 2)) : 0;
    this.drained = messages.length < limit && parked === 0 && !more;
    this.deps.recorder.claimed(messages);
    // The claim asked for no more than each destination's room, but this process's publishes may have
    // taken some of it meanwhile: a message whose destination is full now joins its line instead.
    const keyed: Keyed<ClaimedMessage>[] = [];
    const waiting: ClaimedMessage[] = [];
    const admitting = new Map<string, number>();
    for (const message of messages) {
      const destination = destinationKey(message);
      const counted = admitting.get(destination) ?? 0;
      if (this.deps.slots.room(destination) <= counted) waiting.push(message);
      else if (!isKeyed(message)) this.track(this.startAttempt(message));
      else (keyed.push(message), admitting.set(destination, counted + 1));
    }
    if (waiting.length > 0) this.track(this.parkInLine(waiting, false));
    if (keyed.length > 0) for (const [message, start] of await this.admit(keyed)) this.track(this.startAttempt(message, start));
    return { claimed: messages.length, parked, more };
  }

  /** Takes a due probe of an open circuit and attempts it (a probe that cannot be taken waits for the next round). */
  private async probe(): Promise<void> {
    let probe: ClaimedMessage | null;
    try {
      probe = await this.deps.health.takeProbe(this.deps.workerId);
    } catch (error) {
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: taking a probe failed: ${(error as Error).message}`);
      return;
    }
    if (probe === null) return;
    this.deps.recorder.claimed([probe]);
    this.inFlight++;
    this.track(this.attemptInSlot(probe, undefined, true));
  }

  /**
   * The claimed messages with a flow-control key that their key admits, with
   * when each must start (the rest are held back by the admission and need no
   * record). If admission fails, they are all handed back.
   */
  private async admit(keyed: Keyed<ClaimedMessage>[]): Promise<[ClaimedMessage, Start | undefined][]> {
    try {
      const { admitted, held, startWithinMs, admittedAt } = await admitClaimed(this.deps.sql, keyed);
      // Counted from when the answer came, just after the window was stamped and committed.
      const answered = Date.now();
      for (const message of held) this.deps.recorder.skipped(message.claimId);
      const start = (message: Keyed<ClaimedMessage>): Start | undefined => {
        const within = startWithinMs.get(message.id);
        return within === undefined ? undefined : { by: answered + within, admittedAt: admittedAt.get(message.id)!, message };
      };
      return admitted.map((message): [ClaimedMessage, Start | undefined] => [message, start(message)]);
    } catch (error) {
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: admission failed: ${(error as Error).message}`);
      // Not at once: an admission that keeps failing must not spin.
      for (const message of keyed) this.track(this.handBack(message, ADMISSION_RETRY_MS));
      return [];
    }
  }

  private async releaseUnknown(): Promise<void> {
    const released = await releaseUnknownClaims(this.deps.sql, this.deps.workerId, this.deps.recorder.openClaims());
    this.unsure = false;
    if (released > 0) this.deps.log(`worker: ${released} messages of a claim whose answer was lost are due again`);
  }

  private startAttempt(message: ClaimedMessage, start?: Start): Promise<void> {
    this.inFlight++;
    return this.attemptInSlot(message, start);
  }

  /** Attempts a message in a slot already counted in `inFlight`, and frees the slot. */
  private async attemptInSlot(message: ClaimedMessage, start?: Start, probe = false): Promise<void> {
    let ticket: SlotTicket | null = this.deps.slots.started(destinationKey(message));
    try {
      const delivery = await deliverClaimed(this.deps.deliver, message, { startBy: start?.by, probe });
      const answered = delivery.kind === "attempted" && !(delivery.record.attempt.kind === "error" && delivery.record.attempt.notSent);
      this.deps.slots.finished(ticket, answered);
      ticket = null;
      // What waits for its room may go on now: not only at the next poll.
      if (this.waitingForRoom.has(destinationKey(message))) this.wake();
      if (delivery.kind === "interrupted") await this.handBack(message);
      else if (delivery.kind === "late") await this.withdraw(start!);
      else {
        const { record } = delivery;
        const holdMs = this.deps.health.observe(message, record.attempt);
        if (holdMs > 0) {
          this.deps.slots.hold(destinationKey(message), holdMs);
          this.wake(Date.now() + holdMs);
        }
        await this.deps.recorder.record(record);
        this.count(record);
        if (record.outcome.kind === "retry") this.wake(Date.now() + record.outcome.delayMs);
      }
    } catch (error) {
      // An outage is logged once by `availability`; anything else is logged as it comes.
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: attempt of ${message.id} failed: ${(error as Error).message}`, { messageId: message.id, project: message.project });
      await this.handBack(message);
    } finally {
      if (ticket !== null) this.deps.slots.finished(ticket, false);
      this.freeSlots(1);
    }
  }

  /** Claimed messages whose destination is held or full join its line (and free their slots, if they `tookSlots`). */
  private async parkInLine(messages: ClaimedMessage[], tookSlots: boolean): Promise<void> {
    for (const message of messages) this.waitingForRoom.add(destinationKey(message));
    try {
      await this.deps.availability.retrying(() => parkClaimed(this.deps.sql, messages));
      for (const message of messages) this.deps.recorder.skipped(message.claimId);
    } catch (error) {
      // The claims stay registered: once this process stops beating, a sweep puts the messages back.
      this.deps.log(`worker: parking ${messages.length} messages failed: ${(error as Error).message}`);
    } finally {
      if (tookSlots) this.freeSlots(messages.length);
    }
  }

  /** Frees `count` slots; wakes the loop if that makes room for a claim it was waiting for. */
  private freeSlots(count: number): void {
    const wasFull = this.deps.concurrency - this.inFlight < this.minClaim;
    this.inFlight -= count;
    if (wasFull && this.deps.concurrency - this.inFlight >= this.minClaim) this.wake();
  }

  /**
   * Puts a message this worker will not attempt back on the work list. If
   * that fails, its claim stays registered: once this process stops beating,
   * the sweep of another one puts the message back.
   */
  private async handBack(message: ClaimedMessage, delayMs = 0): Promise<void> {
    const claim = { messageId: message.id, claimId: message.claimId };
    try {
      await this.deps.availability.retrying(() => releaseClaimedMessages(this.deps.sql, [claim], delayMs));
      this.deps.recorder.skipped(claim.claimId);
    } catch (error) {
      this.deps.log(`worker: hand-back of ${message.id} failed: ${(error as Error).message}`, { messageId: message.id, project: message.project });
    }
  }

  private async handBackFromSlot(message: ClaimedMessage): Promise<void> {
    try {
      await this.handBack(message);
    } finally {
      this.freeSlots(1);
    }
  }

  /** A request that could not start in time goes back to be admitted again; its start is not counted. */
  private async withdraw({ message, admittedAt }: Start): Promise<void> {
    try {
      await this.deps.availability.retrying(() => withdrawAdmission(this.deps.sql, message, admittedAt));
      this.deps.recorder.skipped(message.claimId);
    } catch (error) {
      this.deps.log(`worker: withdrawing the admission of ${message.id} failed: ${(error as Error).message}`, {
        messageId: message.id,
        project: message.project,
      });
    }
  }

  private count({ message, attempt, outcome }: AttemptRecord): void {
    const { metrics } = this.deps;
    metrics.outcomes.inc({ project: metrics.projects.of(message.project), outcome: OUTCOME_LABEL[outcome.kind] });
    if (outcome.kind === "failed") this.deps.failedForGood();
    metrics.attemptSeconds.observe(attempt.durationMs / 1000);
  }

  private track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }
}

/** The metric label of each outcome. */
const OUTCOME_LABEL = { delivered: "delivered", retry: "retried", failed: "failed", held: "held" } as const;

/** The destination a message counts against (rows finished before destinations were recorded have none stored). */
function destinationKey(message: ClaimedMessage): string {
  return message.destination ?? destinationOf(message.url);
}
