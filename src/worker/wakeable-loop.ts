/**
 * A loop that runs rounds and sleeps between them, woken early by a NOTIFY on
 * its channel or by `wake()`: the shape of the claim loop and the schedules'
 * loop. A wake that comes while a round runs skips the next sleep.
 */
import type { Listener } from "../db/client";

export class WakeableLoop {
  private stopping = false;
  private woken = false;
  private wakeUp: () => void = () => {};
  private loop: Promise<void> = Promise.resolve();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly listener: Listener,
    private readonly channel: string,
  ) {}

  /** Whether `stop` was called. */
  get stopped(): boolean {
    return this.stopping;
  }

  /**
   * Starts listening, then runs `round` until stopped. A round returns how
   * long to sleep before the next one, or null to run the next one at once.
   * `notified` hears each NOTIFY before the wake.
   */
  async start(round: () => Promise<number | null>, notified: () => void = () => {}): Promise<void> {
    const listening = await this.listener.listen(this.channel, () => (notified(), this.wake()));
    this.unlisten = listening.unlisten;
    this.loop = this.run(round);
  }

  /** Ends the loop after its current round and stops listening. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loop;
    await this.unlisten?.().catch(() => {});
  }

  /** Ends the current sleep, or skips the next one. */
  wake(): void {
    this.woken = true;
    this.wakeUp();
  }

  private async run(round: () => Promise<number | null>): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      const sleepMs = await round();
      if (sleepMs !== null && !this.woken && !this.stopping) await this.sleep(sleepMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = () => {};
        resolve();
      };
    });
  }
}
