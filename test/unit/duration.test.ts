import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../src/domain/duration";

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["2m", 120_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1d10h30m", 86_400_000 + 36_000_000 + 1_800_000],
    ["1h30m15s", 5_415_000],
    ["1d1s", 86_401_000],
    ["0s", 0],
    ["007s", 7_000],
    ["  5m\t", 300_000],
    ["2H", 7_200_000],
    ["1D2h3M4S", 93_784_000],
  ])("parses %j", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ["30", 30_000],
    ["0", 0],
    [" 45 ", 45_000],
  ])("reads bare integer %j as seconds", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    "",
    "   ",
    "-5s",
    "-5",
    "+5s",
    "1.5s",
    "1.5",
    "5x",
    "5ms",
    "5w",
    "s",
    "h1",
    "1h 30m",
    "1h1h",
    "30m1h",
    "1s1d",
    "1hgarbage",
    "garbage1h",
    "1h-",
    "1e3s",
    "0x10s",
    "five seconds",
    "1_000s",
  ])("rejects %j", (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("rejects results beyond Number.MAX_SAFE_INTEGER milliseconds", () => {
    const maxSeconds = Math.floor(Number.MAX_SAFE_INTEGER / 1_000);
    expect(parseDuration(`${maxSeconds}s`)).toBe(maxSeconds * 1_000);
    expect(parseDuration(`${maxSeconds + 1}s`)).toBeNull();
    expect(parseDuration(`${maxSeconds + 1}`)).toBeNull();
    expect(parseDuration("99999999999999999999999d")).toBeNull();
    expect(parseDuration(`${"9".repeat(400)}s`)).toBeNull();
  });

  it("rejects a sum that overflows even when each part is safe", () => {
    const days = Math.floor(Number.MAX_SAFE_INTEGER / 86_400_000);
    expect(parseDuration(`${days}d`)).toBe(days * 86_400_000);
    expect(parseDuration(`${days}d23h59m59s`)).toBeNull();
  });
});

describe("formatDuration", () => {
  it.each([
    [120_000, "2m"],
    [3_600_000, "1h"],
    [90_000, "90s"],
    [86_400_000, "1d"],
    [172_800_000, "2d"],
    [90_000_000, "25h"],
    [5_400_000, "90m"],
    [1_000, "1s"],
    [0, "0s"],
    [1_500, "1.5s"],
    [250, "0.25s"],
    [-60_000, "-1m"],
  ])("formats %d as %j", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([1_000, 90_000, 120_000, 3_600_000, 86_400_000, 93_784_000])("round-trips %d through parseDuration", (ms) => {
    expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
