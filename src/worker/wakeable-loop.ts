/**
 * A loop that runs rounds and sleeps between them, woken early by a NOTIFY on
 * its channel, by `wake()`, or at a time `wakeAt` was given: the shape of the
 * claim loop and the schedules' loop. A wake that comes while a round runs
 * skips the next sleep; a time given while it runs ends a later sleep then.
 */
import type { Listener } from "../db/client";

/** Most wake-up times kept at once: past these, the latest are dropped (the loop's own poll finds their work). */
const MAX_WAKE_TIMES = 256;

export class WakeableLoop {
  private stopping = false;
  private woken = false;
  private wakeUp: () => void = () => {};
  /** The current sleep's end (epoch ms), or null while a round runs. */
  private sleepingUntil: number | null = null;
  /** Times to wake at (epoch ms), earliest first. */
  private wakeTimes: number[] = [];
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
   * `notified` hears each NOTIFY's payload and says what to do: wake now
   * (true), wake at a time (a number, epoch ms), or nothing (false).
   */
  async start(round: () => Promise<number | null>, notified: (payload: string) => boolean | number = () => true): Promise<void> {
    const listening = await this.listener.listen(this.channel, (payload) => {
      const heard = notified(payload);
      if (heard === true) this.wake();
      else if (heard !== false) this.wakeAt(heard);
    });
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

  /** Makes sure a round runs at `at` (epoch ms) or soon after: no sleep then goes past it. */
  wakeAt(at: number): void {
    if (at <= Date.now()) return this.wake();
    const i = this.wakeTimes.findIndex((time) => time >= at);
    if (this.wakeTimes[i] === at) return;
    this.wakeTimes.splice(i === -1 ? this.wakeTimes.length : i, 0, at);
    if (this.wakeTimes.length > MAX_WAKE_TIMES) this.wakeTimes.pop();
    // Asleep past it: sleep again, until then at the latest.
    if (this.sleepingUntil !== null && at < this.sleepingUntil) this.wakeUp();
  }

  private async run(round: () => Promise<number | null>): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      this.dropWakeTimes();
      const sleepMs = await round();
      if (sleepMs !== null && !this.woken && !this.stopping) await this.sleep(sleepMs);
    }
  }

  /** Sleeps `ms`, or until the first wake-up time if sooner; a wake-up time given meanwhile shortens it. */
  private async sleep(ms: number): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      if (this.woken || this.stopping) return;
      const end = Math.min(until, this.wakeTimes[0] ?? until);
      if (end <= Date.now()) return;
      const cutShort = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), end - Date.now());
        this.sleepingUntil = end;
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      this.wakeUp = () => {};
      this.sleepingUntil = null;
      // Slept its time out: the round is due, for every time up to its end (a timer may fire a little early).
      // Cut short: woken (checked above), or a sooner time to sleep to.
      if (!cutShort) return this.dropWakeTimes(end);
    }
  }

  /** Forgets the wake-up times up to `until` (now by default): a round runs for them. */
  private dropWakeTimes(until = Date.now()): void {
    let n = 0;
    while (n < this.wakeTimes.length && this.wakeTimes[n]! <= until) n++;
    if (n > 0) this.wakeTimes.splice(0, n);
  }
}
