/**
 * Relative times, as the dashboard and the CLI say them: rounded to the
 * nearest whole unit (a 2-minute delay, seen a second later, is "in 2 min",
 * never "in 1 min"), in the unit the rounded count calls for; the same words
 * from the dashboard's script, which runs the very function in the browser,
 * and from the pages' times.
 */
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { relativeTime } from "../../src/domain/relative-time";
import { CLIENT_SCRIPT } from "../../src/http/dashboard/shell/client";
import { Time } from "../../src/http/dashboard/kit/components";

const NOW = Date.UTC(2026, 0, 31, 9, 30);
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/** [milliseconds from now, what is said]. */
const SAID: [number, string][] = [
  [0, "in 0 s"],
  [1_499, "in 1 s"],
  [1_500, "in 2 s"],
  [59_400, "in 59 s"],
  [59_600, "in 1 min"],
  [89 * S, "in 1 min"],
  [90 * S, "in 2 min"],
  [119 * S, "in 2 min"],
  [2 * MIN, "in 2 min"],
  [-119 * S, "2 min ago"],
  [-45 * S, "45 s ago"],
  [59 * MIN + 29 * S, "in 59 min"],
  [59 * MIN + 31 * S, "in 1 h"],
  [90 * MIN, "in 2 h"],
  [-(2 * H + 29 * MIN), "2 h ago"],
  [23 * H + 40 * MIN, "in 1 d"],
  [36 * H, "in 2 d"],
  [-10 * 24 * H, "10 d ago"],
];

/** The dashboard's script run as a browser would, with the little of a page it touches at start; what it defines as `relativeTime`. */
function scriptRelativeTime(): (at: number, now: number) => string {
  const page = {
    document: { readyState: "complete", addEventListener: () => {}, querySelectorAll: () => [] },
    window: {},
    setInterval: () => 0,
  };
  return runInNewContext(`${CLIENT_SCRIPT}\n;relativeTime`, page) as (at: number, now: number) => string;
}

describe("relative times", () => {
  it("round to the nearest whole unit, the unit chosen once rounded", () => {
    for (const [delta, said] of SAID) expect(relativeTime(NOW + delta, NOW), `${delta} ms`).toBe(said);
  });

  it("are said the same by the dashboard's script, which keeps them counting in the browser", () => {
    const inBrowser = scriptRelativeTime();
    for (const [delta, said] of SAID) expect(inBrowser(NOW + delta, NOW), `${delta} ms`).toBe(said);
    for (let delta = -3 * 24 * H; delta <= 3 * 24 * H; delta += 7_919) {
      expect(inBrowser(NOW + delta, NOW)).toBe(relativeTime(NOW + delta, NOW));
    }
  });

  it("are what the pages' times show beside the UTC time", () => {
    const shown = String(Time({ at: new Date(NOW + 119 * S), now: NOW }));
    expect(shown).toContain('<span class="muted ago">(in 2 min)</span>');
    expect(String(Time({ at: NOW - 119 * S, now: NOW }))).toContain("(2 min ago)");
  });
});
