/**
 * The schedules' loop in one worker process: fire the ticks that are due
 * (domain/schedules/fire.ts), then sleep until the earliest next tick. A
 * NOTIFY on `SCHEDULES_CHANNEL` (a schedule created or resumed anywhere)
 * wakes it, and it never sleeps longer than `LOOK_AGAIN_MS`, in case a
 * NOTIFY was lost while its connection was away. Every worker runs it; the
 * row locks make each tick fire once.
 */
import type { DatabaseAvailability } from "../db/availability";
import type { Listener, Sql } from "../db/client";
import type { PublishSettings } from "../domain/publish/prepare";
import { fireDueSchedules, nextDueTick, projectsWithDueTicks } from "../domain/schedules/fire";
import { SCHEDULES_CHANNEL } from "../domain/schedules/schedules";
import type { Log } from "../observability/log";
import type { Metrics } from "../observability/metrics";
import { WakeableLoop } from "./wakeable-loop";

/** What the loop works with. */
export interface SchedulerDeps {
  sql: Sql;
  /** Where the loop LISTENs for schedule changes (the direct connection). */
  listener: Listener;
  availability: DatabaseAvailability;
  settings: PublishSettings;
  /** Whether the tables are distributed over a Citus cluster: each project's ticks are then fired apart. */
  distributed: boolean;
  /** The time ticks are judged by (tests move it on instead of waiting minutes). */
  now: () => number;
  metrics: Metrics;
  log: Log;
}

/** Longest sleep between two looks at the schedules. */
const LOOK_AGAIN_MS = 1000;

/** Fires schedules until stopped. */
export class Scheduler {
  private readonly loop: WakeableLoop;

  constructor(private readonly deps: SchedulerDeps) {
    this.loop = new WakeableLoop(deps.listener, SCHEDULES_CHANNEL);
  }

  start(): Promise<void> {
    return this.loop.start(() =>
      this.fireDue().catch((error: unknown) => {
        if (!this.deps.availability.failed(error)) this.deps.log(`schedules: ${(error as Error).message}`);
        return LOOK_AGAIN_MS;
      }),
    );
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Fires what is due; returns how long to sleep before the next look. */
  private async fireDue(): Promise<number> {
    const { sql, settings, now } = this.deps;
    const projects = this.deps.distributed ? await projectsWithDueTicks(sql, new Date(now())) : [null];
    for (const project of projects) {
      while (!this.loop.stopped) {
        const fired = await fireDueSchedules(sql, settings, new Date(now()), project);
        this.deps.metrics.schedulesFired.inc(fired);
        if (fired === 0) break;
      }
    }
    const next = await nextDueTick(sql);
    return next === null ? LOOK_AGAIN_MS : Math.max(0, Math.min(LOOK_AGAIN_MS, next.getTime() - now()));
  }
}
