/**
 * Group commit for the app: concurrent callers' items are written together,
 * in one transaction (or one autocommit statement, when the writer needs no
 * more), so one commit (and one NOTIFY) serves many requests (README
 * "Architecture: the delivery engine").
 *
 * There is no fixed linger: an item submitted while no batch is running is
 * written at once; items arriving while `maxConcurrent` batches are in flight
 * wait and leave together in the next one. Light load pays no latency, heavy
 * load gets large batches. If a batch fails, its items are retried one by one
 * so that a single failing item cannot fail its neighbours.
 */
import type { Sql, Tx } from "./client";

/** Writes a batch in a transaction; returns one result per item, in order. */
export type BatchWriter<I, O> = (tx: Tx, items: I[]) => Promise<O[]>;

interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/** Coalesces concurrent writes into shared transactions. */
export class Coalescer<I, O> {
  private readonly waiting: Pending<I, O>[] = [];
  private inFlight = 0;

  constructor(
    private readonly sql: Sql,
    private readonly write: BatchWriter<I, O>,
    private readonly options: {
      maxBatch: number;
      maxConcurrent: number;
      /** Whether a batch needs a transaction; one that the writer stores in a single statement does not. */
      transactional?: (items: I[]) => boolean;
    },
  ) {}

  /** Writes `item` with whatever else is waiting; resolves after the commit. */
  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxConcurrent && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.run(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async run(batch: Pending<I, O>[]): Promise<void> {
    try {
      const items = batch.map((p) => p.item);
      const results: O[] = [];
      if (this.options.transactional?.(items) === false) results.push(...(await this.write(this.sql, items)));
      else await this.sql.begin(async (tx) => void results.push(...(await this.write(tx, items))));
      batch.forEach((pending, i) => pending.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // Isolate the failing item: every other item still gets its own chance.
      await Promise.all(batch.map((pending) => this.run([pending])));
    }
  }
}
