/**
 * The delivery engine's loop in one worker process: claim due messages
 * (`claim-messages.ts`), attempt each, record the outcomes in batches.
 *
 * Claimed messages with a flow-control key are attempted only as their key
 * admits them (domain/flow-control/admission.ts).
 *
 * It claims when it has free capacity and is woken by a NOTIFY on the due
 * channel (publishes, queue starts), by a finished attempt while it was full,
 * by its own retries coming due, and otherwise polls every `pollIntervalMs`
 * (delayed messages and retries made by other processes). When full, it
 * waits for a handful of free slots so that claims stay batches.
 *
 * It is also this process's `LocalDelivery`: publishes store immediate
 * messages already claimed by it (domain/publish/local-delivery.ts), in slots
 * it lends only while the work list had nothing more for it at its last claim
 * and no NOTIFY came since, and never the last `minClaim` ones, so the work
 * list is never starved by local publishes.
 */
import type { DatabaseAvailability } from "../db/availability";
import type { Listener, Sql } from "../db/client";
import { type ClaimedMessage, claimMessages } from "../db/queries/claim-messages";
import { DUE_CHANNEL } from "../db/queries/work-list";
import { releaseClaimedMessages, releaseUnknownClaims } from "../db/queries/sweep-claims";
import type { AttemptRecord } from "../domain/delivery/outcome";
import type { Delivery } from "./deliver";
import type { LocalDelivery } from "../domain/publish/local-delivery";
import { admitClaimed, withdrawAdmission } from "../domain/flow-control/admission";
import type { Log } from "../observability/log";
import type { Metrics } from "../observability/metrics";
import type { Recorder } from "./recorder";
import { WakeableLoop } from "./wakeable-loop";

/** How long keyed messages whose admission failed wait before they are claimed again. */
const ADMISSION_RETRY_MS = 1000;

/** When an admitted rate-limited request must start by (epoch ms), and the start its window counted. */
interface Start {
  by: number;
  admittedAt: Date;
}

/** What the loop works with. */
export interface ClaimerDeps {
  sql: Sql;
  /** Where the loop LISTENs for due messages (the direct connection). */
  listener: Listener;
  availability: DatabaseAvailability;
  recorder: Recorder;
  /** Makes one attempt, if it can start by `startBy` (epoch ms). */
  attempt: (message: ClaimedMessage, startBy?: number) => Promise<Delivery>;
  /** Registered lock holder under which claims are taken (its heartbeat keeps them). */
  workerId: string;
  concurrency: number;
  pollIntervalMs: number;
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

  constructor(private readonly deps: ClaimerDeps) {
    this.minClaim = Math.max(1, Math.min(16, Math.floor(deps.concurrency / 16)));
    this.loop = new WakeableLoop(deps.listener, DUE_CHANNEL);
  }

  /** Starts listening and claiming. */
  async start(): Promise<void> {
    await this.loop.start(() => this.round(), () => (this.drained = false));
  }

  get workerId(): string {
    return this.deps.workerId;
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
    this.deps.recorder.claimed(messages[0]!.claimId, messages.length);
    this.deps.metrics.claimedAtPublish.inc(messages.length);
    // Stored while the worker stopped: back to the work list, for whichever process runs on.
    const work = this.loop.stopped ? (message: ClaimedMessage) => this.handBackFromSlot(message) : (message: ClaimedMessage) => this.attemptInSlot(message);
    for (const message of messages) this.track(work(message));
  }

  /** Stops claiming and waits for the attempts in flight (the caller aborts them if it must). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all(this.running);
  }

  /** Wakes the loop now; `at` wakes it at that time instead (a retry of this process coming due). */
  wake(at?: number): void {
    if (at !== undefined && at > Date.now()) return void setTimeout(() => this.wake(), at - Date.now()).unref();
    this.loop.wake();
  }

  /** Claims what fits; a full claim goes again at once, anything less waits for a wake or the poll. */
  private async round(): Promise<number | null> {
    const free = this.deps.concurrency - this.inFlight;
    const claimed = free >= this.minClaim ? await this.claim(free) : 0;
    return claimed === free && claimed > 0 ? null : this.deps.pollIntervalMs;
  }

  /**
   * Claims up to `limit` messages and starts their attempts; returns how
   * many. A claim that failed may still have committed (the answer lost with
   * the connection): before claiming again, the claims this worker does not
   * know of are released.
   */
  private async claim(limit: number): Promise<number> {
    let messages: ClaimedMessage[];
    // A claim an insert under way registered is not known yet: releasing now would put its
    // messages back on the list while they are attempted. `reserve` lends nothing while unsure,
    // so the inserts under way end within a statement; the next round releases.
    if (this.unsure && this.localInserts > 0) return 0;
    try {
      if (this.unsure) await this.releaseUnknown();
      messages = await claimMessages(this.deps.sql, this.deps.workerId, limit);
    } catch (error) {
      this.unsure = true;
      this.drained = false;
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: claim failed: ${(error as Error).message}`);
      await this.deps.availability.whenUp();
      return 0;
    }
    this.drained = messages.length < limit;
    if (messages.length > 0) this.deps.recorder.claimed(messages[0]!.claimId, messages.length);
    const keyed = messages.filter((message) => message.flowControlKey !== null);
    const free = keyed.length === 0 ? messages : messages.filter((message) => message.flowControlKey === null);
    for (const message of free) this.track(this.startAttempt(message));
    if (keyed.length > 0) for (const [message, start] of await this.admit(keyed)) this.track(this.startAttempt(message, start));
    return messages.length;
  }

  /**
   * The claimed messages with a flow-control key that their key admits, with
   * when each must start (the rest are held back by the admission and need no
   * record). If admission fails, they are all handed back.
   */
  private async admit(keyed: ClaimedMessage[]): Promise<[ClaimedMessage, Start | undefined][]> {
    try {
      const { admitted, held, startWithinMs, admittedAt } = await admitClaimed(this.deps.sql, keyed);
      // Counted from when the answer came, just after the window was stamped and committed.
      const answered = Date.now();
      for (const message of held) this.deps.recorder.skipped(message.claimId);
      const start = (message: ClaimedMessage): Start | undefined => {
        const within = startWithinMs.get(message.id);
        return within === undefined ? undefined : { by: answered + within, admittedAt: admittedAt.get(message.id)! };
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
  private async attemptInSlot(message: ClaimedMessage, start?: Start): Promise<void> {
    try {
      const delivery = await this.deps.attempt(message, start?.by);
      if (delivery.kind === "interrupted") await this.handBack(message);
      else if (delivery.kind === "late") await this.withdraw(message, start!.admittedAt);
      else {
        const { record } = delivery;
        await this.deps.recorder.record(record);
        this.count(record);
        if (record.outcome.kind === "retry") this.wake(Date.now() + record.outcome.delayMs);
      }
    } catch (error) {
      // An outage is logged once by `availability`; anything else is logged as it comes.
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: attempt of ${message.id} failed: ${(error as Error).message}`, { messageId: message.id });
      await this.handBack(message);
    } finally {
      this.freeSlots(1);
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
      this.deps.log(`worker: hand-back of ${message.id} failed: ${(error as Error).message}`, { messageId: message.id });
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
  private async withdraw(message: ClaimedMessage, admittedAt: Date): Promise<void> {
    try {
      await this.deps.availability.retrying(() => withdrawAdmission(this.deps.sql, message, admittedAt));
      this.deps.recorder.skipped(message.claimId);
    } catch (error) {
      this.deps.log(`worker: withdrawing the admission of ${message.id} failed: ${(error as Error).message}`, {
        messageId: message.id,
      });
    }
  }

  private count({ attempt, outcome }: AttemptRecord): void {
    this.deps.metrics.outcomes.inc({ outcome: outcome.kind === "retry" ? "retried" : outcome.kind });
    this.deps.metrics.attemptSeconds.observe(attempt.durationMs / 1000);
  }

  private track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }
}
