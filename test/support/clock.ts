/**
 * The clock a test service's schedules fire by: the real one, moved on at
 * will, so a tick a minute away comes at once. Moving it tells the service's
 * workers to look at the schedules again (the NOTIFY a created schedule sends).
 */
import { SCHEDULES_CHANNEL } from "../../src/domain/schedules/schedules";
import type { TestService } from "./service";

export class TestClock {
  private ahead = 0;
  /** The time by this clock; pass it as a service's `now`. */
  readonly now = () => Date.now() + this.ahead;

  /** Sets the clock to `at` (Unix ms) and wakes `dispatch`'s schedules. */
  async moveTo(dispatch: TestService, at: number): Promise<void> {
    this.ahead = at - Date.now();
    await dispatch.service.sql`select pg_notify(${SCHEDULES_CHANNEL}, '')`;
  }
}
