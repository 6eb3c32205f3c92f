/**
 * How one worker shares its delivery slots among destinations, so that one
 * that hangs or answers slowly cannot take them all:
 *
 * - A destination holds at most its share of the worker's slots
 *   (`DISPATCH_DESTINATION_SHARE` of them, 64 of 256 by default) while its
 *   requests are slow or unproven.
 * - A destination proven fast — its answers come back in under `FAST_MS` on
 *   average, and none of its requests in flight is older — may hold all but
 *   one share: its slots turn over within a second, and the last share stays
 *   free for the others, so a fast destination that suddenly hangs still
 *   leaves one share to everyone else until its requests time out.
 * - A 429's Retry-After holds the destination here at once (the circuit's row
 *   holds it for the other workers, `destination-health.ts`).
 *
 * A destination's slot is held from its request's start to its answer, not
 * while the outcome is recorded: what the share bounds is what the
 * destination makes the worker wait for.
 */
import type { ClaimRoom } from "../db/queries/claim-messages";

/** Answers back within this on average, with none outstanding longer, make a destination fast. */
export const FAST_MS = 1000;
/** Weight of the newest answer in a destination's average time to answer. */
const ALPHA = 0.2;
/** Idle destinations remembered (for their average) at most; the oldest idle ones are forgotten first. */
const REMEMBERED = 10_000;

/** One request in flight to a destination. */
export interface SlotTicket {
  readonly destination: string;
  readonly startedAt: number;
}

interface Load {
  /** Requests in flight, oldest first (a Set keeps insertion order). */
  inFlight: Set<SlotTicket>;
  /** Average time to answer (ms), null until the first answer. */
  averageMs: number | null;
  /** Epoch ms until which a 429 holds it. */
  heldUntil: number;
}

/** Per-destination slot accounting of one worker. */
export class DestinationSlots {
  /** Slots one destination may hold while it is slow or unproven. */
  readonly share: number;
  private readonly loads = new Map<string, Load>();

  constructor(
    private readonly concurrency: number,
    shareFraction: number,
    private readonly now: () => number = Date.now,
  ) {
    this.share = Math.max(1, Math.floor(concurrency * shareFraction));
  }

  /** A request to `destination` starts. */
  started(destination: string): SlotTicket {
    const ticket = { destination, startedAt: this.now() };
    this.load(destination).inFlight.add(ticket);
    return ticket;
  }

  /** The request of `ticket` ended; `answered` when it was made (its time counts in the destination's average). */
  finished(ticket: SlotTicket, answered: boolean): void {
    const load = this.loads.get(ticket.destination);
    if (load === undefined || !load.inFlight.delete(ticket) || !answered) return;
    const took = this.now() - ticket.startedAt;
    load.averageMs = load.averageMs === null ? took : load.averageMs + ALPHA * (took - load.averageMs);
  }

  /** A 429 asked the destination to be left alone for `ms`. */
  hold(destination: string, ms: number): void {
    const load = this.load(destination);
    load.heldUntil = Math.max(load.heldUntil, this.now() + ms);
  }

  /** How many more requests `destination` may have in flight now. */
  room(destination: string): number {
    const load = this.loads.get(destination);
    if (load === undefined) return this.share;
    if (load.heldUntil > this.now()) return 0;
    return Math.max(0, this.limit(load) - load.inFlight.size);
  }

  /**
   * The room a claim of up to `limit` messages has: the share for any
   * destination, and their own room for those with requests in flight or held.
   */
  claimRoom(limit: number, pass: number): ClaimRoom {
    const byDestination: Record<string, number> = {};
    for (const [destination, load] of this.loads) {
      if (load.inFlight.size > 0 || load.heldUntil > this.now()) byDestination[destination] = this.room(destination);
    }
    return { limit, share: this.share, byDestination, pass };
  }

  /** Requests in flight to `destination`. */
  inFlight(destination: string): number {
    return this.loads.get(destination)?.inFlight.size ?? 0;
  }

  /** Each destination with requests in flight, and how many. */
  *busy(): Iterable<[string, number]> {
    for (const [destination, load] of this.loads) if (load.inFlight.size > 0) yield [destination, load.inFlight.size];
  }

  private limit(load: Load): number {
    const oldest = load.inFlight.values().next().value as SlotTicket | undefined;
    const fast =
      load.averageMs !== null && load.averageMs < FAST_MS && (oldest === undefined || this.now() - oldest.startedAt < FAST_MS);
    return fast ? Math.max(this.share, this.concurrency - this.share) : this.share;
  }

  private load(destination: string): Load {
    let load = this.loads.get(destination);
    if (load === undefined) {
      if (this.loads.size >= REMEMBERED) this.forgetIdle();
      load = { inFlight: new Set(), averageMs: null, heldUntil: 0 };
      this.loads.set(destination, load);
    }
    return load;
  }

  /** Forgets the idle destinations (a Map keeps insertion order: the longest known go first). */
  private forgetIdle(): void {
    for (const [destination, load] of this.loads) {
      if (this.loads.size < REMEMBERED / 2) return;
      if (load.inFlight.size === 0 && load.heldUntil <= this.now()) this.loads.delete(destination);
    }
  }
}
