/**
 * Watches the DLQ's size for its operator event (domain/operator-events/dlq-threshold.ts):
 * after any message this worker failed for good, at its next look (about a
 * second later), and at least once a minute (an entry retried, deleted or
 * expired arms the event again).
 */
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import { checkDlqThreshold } from "../domain/operator-events/dlq-threshold";
import type { OperatorEventSettings } from "../domain/operator-events/operator-events";
import type { Log } from "../observability/log";

/** Looks at least this often even when this worker failed nothing. */
const LOOK_EVERY_MS = 60_000;

/** One worker's watch of the DLQ's size. */
export class DlqWatch {
  private failedSinceLook = false;
  private lookedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private looking: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      sql: Sql;
      availability: DatabaseAvailability;
      threshold: number;
      events: OperatorEventSettings;
      intervalMs: number;
      log: Log;
    },
  ) {}

  /** Starts looking (nothing to watch without an operator URL). */
  start(): void {
    if (this.deps.events.url === null) return;
    this.timer = setInterval(() => void (this.looking = this.look()), this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.looking;
  }

  /** A message failed for good here: it may have gone to the DLQ. */
  failed(): void {
    this.failedSinceLook = true;
  }

  private async look(): Promise<void> {
    if (!this.failedSinceLook && Date.now() - this.lookedAt < LOOK_EVERY_MS) return;
    this.failedSinceLook = false;
    this.lookedAt = Date.now();
    try {
      await this.deps.sql.begin((tx) => checkDlqThreshold(tx, this.deps.threshold, this.deps.events));
    } catch (error) {
      if (!this.deps.availability.failed(error)) this.deps.log(`worker: the DLQ threshold check failed: ${(error as Error).message}`);
    }
  }
}
