/** Cron expressions: five fields, an optional CRON_TZ zone, and ticks across daylight-saving changes. */
import { describe, expect, it } from "vitest";
import { AppError } from "../../src/domain/errors";
import { nextTick, parseCron } from "../../src/domain/schedules/cron";

const tick = (text: string, after: string) => nextTick(parseCron(text), new Date(after)).toISOString();

describe("parseCron", () => {
  it("trims the expression and reads the zone prefix; UTC otherwise", () => {
    expect(parseCron("  */10 * * * *  ")).toEqual({ text: "*/10 * * * *", pattern: "*/10 * * * *", timezone: "UTC" });
    expect(parseCron("CRON_TZ=America/New_York 0 9 * * 1-5")).toEqual({
      text: "CRON_TZ=America/New_York 0 9 * * 1-5",
      pattern: "0 9 * * 1-5",
      timezone: "America/New_York",
    });
  });

  it.each([
    ["", /cron expression is required/],
    ["* * * *", /five fields/],
    ["* * * * * *", /five fields/],
    ["@daily", /five fields/],
    ["61 * * * *", /invalid cron "61 \* \* \* \*".*minute/],
    ["CRON_TZ=Mars/Olympus * * * * *", /unknown time zone "Mars\/Olympus"/],
    ["0 0 31 2 *", /never fires/],
  ])("refuses %j with a 400 saying why", (text, message) => {
    let caught: unknown;
    try {
      parseCron(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).status).toBe(400);
    expect((caught as AppError).message).toMatch(message);
  });
});

describe("nextTick", () => {
  it("is the first tick strictly after the given time", () => {
    expect(tick("* * * * *", "2026-05-01T10:00:00.000Z")).toBe("2026-05-01T10:01:00.000Z");
    expect(tick("* * * * *", "2026-05-01T10:00:30.000Z")).toBe("2026-05-01T10:01:00.000Z");
    expect(tick("*/15 * * * *", "2026-05-01T10:01:00.000Z")).toBe("2026-05-01T10:15:00.000Z");
  });

  it("reads the fields in the CRON_TZ zone", () => {
    // 09:00 in New York is 13:00 UTC in summer and 14:00 UTC in winter.
    expect(tick("CRON_TZ=America/New_York 0 9 * * *", "2026-07-01T00:00:00Z")).toBe("2026-07-01T13:00:00.000Z");
    expect(tick("CRON_TZ=America/New_York 0 9 * * *", "2026-12-01T00:00:00Z")).toBe("2026-12-01T14:00:00.000Z");
  });

  it("a tick in the hour skipped by the spring change fires at the first valid time after it", () => {
    // Berlin skips 02:00-03:00 on 2026-03-29: 02:30 does not exist, so the tick is 03:00 CEST (01:00 UTC).
    expect(tick("CRON_TZ=Europe/Berlin 30 2 * * *", "2026-03-28T12:00:00Z")).toBe("2026-03-29T01:00:00.000Z");
    // The day after, 02:30 CEST again.
    expect(tick("CRON_TZ=Europe/Berlin 30 2 * * *", "2026-03-29T12:00:00Z")).toBe("2026-03-30T00:30:00.000Z");
  });

  it("a tick in the hour repeated by the autumn change fires once", () => {
    // New York repeats 01:00-02:00 on 2026-11-01: 01:30 EDT (05:30 UTC) fires, 01:30 EST (06:30 UTC) does not.
    const first = tick("CRON_TZ=America/New_York 30 1 * * *", "2026-11-01T00:00:00Z");
    expect(first).toBe("2026-11-01T05:30:00.000Z");
    expect(tick("CRON_TZ=America/New_York 30 1 * * *", first)).toBe("2026-11-02T06:30:00.000Z");
  });
});
