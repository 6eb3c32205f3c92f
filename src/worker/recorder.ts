/**
 * Records the outcomes of a worker's attempts in batches. Plain deliveries
 * (the common case) take one autocommit statement per batch
 * (`record-delivered.ts`; on Citus, two per batch of one project);
 * everything else — retries, failures, callbacks, queued messages — one
 * transaction per batch (`recordOutcomes`).
 *
 * A plain delivery waits up to `PLAIN_LINGER_MS` for others to share its
 * statement (a group commit, as graphile-worker's `completeJobBatchDelay`):
 * written at once, each outcome of a lightly loaded worker took a statement,
 * a commit and a round trip of its own. The destination has its request by
 * then; only the row's state and the claim's release wait.
 *
 * A claim is dropped only after every attempt made under it is committed:
 * the recorder counts each claim's open attempts and piggybacks the finished
 * claims on its next statement (or drops them on `flushReleased`, which the
 * worker calls every second). A crash in between leaves a claim whose
 * messages are finished; the sweep drops it and changes nothing.
 */
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import type { ClaimedMessage } from "../db/queries/claim-messages";
import {
  type DeliveredAttempt,
  dropFinishedClaims,
  type FinishedClaim,
  recordDelivered,
  recordDeliveredOnNode,
  takeAttemptIds,
} from "../db/queries/record-delivered";
import { releaseClaimedMessages } from "../db/queries/sweep-claims";
import { type AttemptRecord, isPlainDelivery, type OutcomeSettings, recordOutcomes } from "../domain/delivery/outcome";
import type { Counter } from "prom-client";
import type { CircuitChange } from "../db/queries/destination-health";
import type { Log } from "../observability/log";

/** How long a message whose outcome could not be written waits before its next attempt. */
const RETRY_UNRECORDED_MS = 60_000;
/** Most plain deliveries one statement records (one autocommit statement, HOT updates). */
const PLAIN_BATCH = 1000;
/** Most other outcomes one transaction records (each may publish callbacks, fail a run, start a queue). */
const OTHER_BATCH = 200;
/** How long the oldest waiting plain delivery waits for others before its statement is written. */
const PLAIN_LINGER_MS = 5;
/** Plain deliveries enough to write at once, without waiting out the linger. */
const PLAIN_WRITE_AT = 32;

interface Waiting {
  record: AttemptRecord;
  done: () => void;
  /** When it was queued (epoch ms). */
  queuedAt: number;
}

/** Batches outcome writes; at most one batch of each kind is written at a time. */
export class Recorder {
  /** The claims taken and not finished: the attempts each holds that are not recorded yet. */
  private readonly open = new Map<number, { attempts: number; project: string | null }>();
  private released: FinishedClaim[] = [];
  private plain: Waiting[] = [];
  private other: Waiting[] = [];
  private writingPlain = false;
  private writingOther = false;
  /** The timer that writes the waiting plain deliveries once the oldest has lingered long enough. */
  private lingering: NodeJS.Timeout | null = null;
  private loggedFallback = false;

  constructor(
    private readonly sql: Sql,
    private readonly availability: DatabaseAvailability,
    private readonly settings: OutcomeSettings,
    private readonly log: Log,
    /** Counts the batches that fell back to one-by-one writes. */
    private readonly fallbacks: Counter<"batch">,
    /** Hears the circuits that recorded probes closed or opened again. */
    private readonly circuitsChanged: (changes: CircuitChange[]) => void = () => {},
    /**
     * Whether the tables are distributed over a Citus cluster: a batch of deliveries then holds one project's,
     * written by a call delegated to its node (`writePlain`).
     */
    private readonly distributed = false,
  ) {}

  /**
   * Counts each message's attempt against its claim (call when they are claimed). A claim on Citus is of
   * one project, which its release names; on one server a claim may hold several projects' messages.
   */
  claimed(messages: readonly ClaimedMessage[]): void {
    for (const { claimId, project } of messages) {
      const claim = this.open.get(claimId);
      if (claim) claim.attempts++;
      else this.open.set(claimId, { attempts: 1, project: this.distributed ? project : null });
    }
  }

  /** The claims this worker took and has not finished recording. */
  openClaims(): number[] {
    return [...this.open.keys()];
  }

  /** An attempt of `claimId` needs no record (handed back): only its claim's count changes. */
  skipped(claimId: number): void {
    this.closeAttempt(claimId);
  }

  /** Records an attempt; resolves once committed (an outage is waited out, never lost). */
  record(record: AttemptRecord): Promise<void> {
    const { message, attempt } = record;
    const result = attempt.kind === "response" ? `status ${attempt.status}` : attempt.error;
    this.log(`attempt of ${message.id}: ${result} in ${attempt.durationMs} ms`, { level: "debug", messageId: message.id, project: message.project });
    return new Promise((done) => {
      const waiting = { record, done, queuedAt: Date.now() };
      if (isPlainDelivery(record)) {
        this.plain.push(waiting);
        this.schedulePlain();
      } else {
        this.other.push(waiting);
        void this.flushOther();
      }
    });
  }

  /** Drops the claims whose attempts are all recorded, if no batch did it meanwhile. */
  async flushReleased(): Promise<void> {
    if (this.released.length === 0 || this.writingPlain) return;
    const claims = this.takeReleased();
    try {
      await dropFinishedClaims(this.sql, claims, this.distributed);
    } catch (error) {
      this.released.push(...claims);
      throw error;
    }
  }

  /**
   * Writes the waiting plain deliveries once there are `PLAIN_WRITE_AT` of
   * them or the oldest has waited `PLAIN_LINGER_MS`; until then a timer waits.
   */
  private schedulePlain(): void {
    if (this.writingPlain || this.plain.length === 0) return;
    if (this.plain.length < PLAIN_WRITE_AT) {
      // A timer already set writes them: deliveries recorded in one turn of the event loop share a statement, however slow the turn.
      if (this.lingering !== null) return;
      const waited = Date.now() - this.plain[0]!.queuedAt;
      if (waited < PLAIN_LINGER_MS) {
        this.lingering = setTimeout(() => {
          this.lingering = null;
          this.schedulePlain();
        }, PLAIN_LINGER_MS - waited);
        return;
      }
    }
    if (this.lingering !== null) clearTimeout(this.lingering);
    this.lingering = null;
    void this.flushPlain();
  }

  private async flushPlain(): Promise<void> {
    if (this.writingPlain || this.plain.length === 0) return;
    this.writingPlain = true;
    const batch = this.distributed ? takeProject(this.plain, PLAIN_BATCH) : this.plain.splice(0, PLAIN_BATCH);
    const released = this.takeReleased(this.distributed ? batch[0]!.record.message.project : null);
    const attempts = batch.map(({ record: { message, attempt } }) => ({
      messageId: message.id,
      project: message.project,
      claimId: message.claimId,
      retried: message.retried,
      startedAt: attempt.startedAt,
      durationMs: attempt.durationMs,
      status: attempt.kind === "response" ? attempt.status : 0,
    }));
    try {
      await this.writePlain(attempts, released);
      this.committed(batch);
    } catch (error) {
      this.released.push(...released);
      this.fellBack("plain", batch.length, error);
      for (const waiting of batch) await this.writeAlone(waiting);
    } finally {
      this.writingPlain = false;
      this.schedulePlain();
    }
  }

  /**
   * One statement on one server. On Citus, two: the attempts' ids taken on the coordinator, then the
   * batch and its project's finished claims in a call delegated to the project's node, made again with the
   * same ids after an outage (so that an answer lost to one logs nothing twice).
   */
  private async writePlain(attempts: DeliveredAttempt[], released: FinishedClaim[]): Promise<void> {
    const claimIds = released.map((claim) => claim.id);
    if (!this.distributed) return void (await this.availability.retrying(() => recordDelivered(this.sql, attempts, claimIds)));
    const ids = await this.availability.retrying(() => takeAttemptIds(this.sql, attempts.length));
    await this.availability.retrying(() => recordDeliveredOnNode(this.sql, attempts, ids, claimIds));
  }

  private async flushOther(): Promise<void> {
    if (this.writingOther || this.other.length === 0) return;
    this.writingOther = true;
    const batch = this.other.splice(0, OTHER_BATCH);
    try {
      await this.writeOther(batch.map((w) => w.record));
      this.committed(batch);
    } catch (error) {
      // One record must not hold up the others: write them one by one.
      this.fellBack("other", batch.length, error);
      for (const waiting of batch) await this.writeAlone(waiting);
    } finally {
      this.writingOther = false;
      void this.flushOther();
    }
  }

  /**
   * A batch that failed as a whole (not an outage: that is waited out) is
   * written one record at a time. Counted, and logged the first time, so that
   * a defect that breaks every batch shows instead of silently costing a
   * statement per record.
   */
  private fellBack(batch: "plain" | "other", size: number, error: unknown): void {
    this.fallbacks.inc({ batch });
    if (this.loggedFallback) return;
    this.loggedFallback = true;
    this.log(`a batch of ${size} ${batch} outcomes failed (${(error as Error).message}); writing them one by one (dispatch_outcome_batch_fallbacks_total counts each)`);
  }

  private async writeOther(records: AttemptRecord[]): Promise<void> {
    const changes = await this.availability.retrying(() => this.sql.begin((tx) => recordOutcomes(tx, records, this.settings)));
    if (changes.length > 0) this.circuitsChanged(changes);
  }

  /**
   * Writes one record; if that fails too, the error is logged and the
   * message goes back on the work list a minute later (the attempt will be
   * made again): an outcome that cannot be written must not strand its message.
   */
  private async writeAlone(waiting: Waiting): Promise<void> {
    const { message } = waiting.record;
    try {
      await this.writeOther([waiting.record]);
      this.committed([waiting]);
    } catch (error) {
      this.log(`outcome of ${message.id} not recorded (${(error as Error).message}); it will be attempted again`, {
        messageId: message.id,
        project: message.project,
      });
      try {
        const claim = { messageId: message.id, claimId: message.claimId };
        await this.availability.retrying(() => releaseClaimedMessages(this.sql, [claim], RETRY_UNRECORDED_MS));
        this.committed([waiting]);
      } catch (release) {
        // The claim stays registered: once this process stops beating, a sweep puts the message back.
        this.log(`hand-back of ${message.id} failed: ${(release as Error).message}`, { messageId: message.id, project: message.project });
        waiting.done();
      }
    }
  }

  private committed(batch: Waiting[]): void {
    for (const { record, done } of batch) {
      this.closeAttempt(record.message.claimId);
      done();
    }
  }

  private closeAttempt(claimId: number): void {
    const claim = this.open.get(claimId) ?? { attempts: 1, project: null };
    if (--claim.attempts > 0) return;
    this.open.delete(claimId);
    this.released.push({ id: claimId, project: claim.project });
  }

  /** Takes the finished claims, or only those of `project` when it is given (the others wait). */
  private takeReleased(project: string | null = null): FinishedClaim[] {
    const taken = project === null ? this.released : this.released.filter((claim) => claim.project === project);
    this.released = project === null ? [] : this.released.filter((claim) => claim.project !== project);
    return taken;
  }
}

/** Takes from `waiting` up to `limit` of the first one's project, in order; the others keep their places. */
function takeProject(waiting: Waiting[], limit: number): Waiting[] {
  const project = waiting[0]!.record.message.project;
  const taken: Waiting[] = [];
  for (let i = 0; i < waiting.length && taken.length < limit; ) {
    if (waiting[i]!.record.message.project === project) taken.push(...waiting.splice(i, 1));
    else i++;
  }
  return taken;
}
