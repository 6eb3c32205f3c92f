import { describe, expect, it } from "vitest";
import { RETRY_AFTER_MAX_MS, parseRetryAfterValue, retryAfterFromHeaders } from "../../src/domain/delivery/retry-after";

const now = new Date("2015-10-21T07:28:00.000Z");
const single = (name: string, value: string) => retryAfterFromHeaders({ [name]: [value] }, now);

describe("retryAfterFromHeaders: seconds", () => {
  it.each([
    ["120", 120_000],
    ["0", 0],
    ["1", 1_000],
    ["1.5", 1_500],
    ["0.25", 250],
    ["0.0001", 1],
    ["1.1", 1_100],
    ["2.007", 2_007],
    [" 30 ", 30_000],
    ["86400", 86_400_000],
  ])("reads %j as seconds", (value, ms) => {
    expect(single("retry-after", value)).toBe(ms);
  });

  it("ignores delays above one day", () => {
    expect(single("retry-after", "86401")).toBeNull();
    expect(single("retry-after", "86400.001")).toBeNull();
    expect(single("retry-after", "1700000000")).toBeNull();
  });
});

describe("retryAfterFromHeaders: HTTP dates", () => {
  it.each([
    ["Wed, 21 Oct 2015 07:29:00 GMT", 60_000],
    ["Wed, 21 Oct 2015 07:28:00 GMT", 0],
    ["Thu, 22 Oct 2015 07:28:00 GMT", 86_400_000],
    ["wed, 21 oct 2015 08:28:00 gmt", 3_600_000],
    ["Wednesday, 21-Oct-15 07:28:30 GMT", 30_000],
    ["Wed Oct 21 07:28:05 2015", 5_000],
  ])("reads %j relative to now", (value, ms) => {
    expect(single("retry-after", value)).toBe(ms);
  });

  it("floors past dates at 0", () => {
    expect(single("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")).toBe(0);
    expect(single("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")).toBe(0);
    expect(single("retry-after", "Sunday, 06-Nov-94 08:49:37 GMT")).toBe(0);
    expect(single("retry-after", "Sun Nov  6 08:49:37 1994")).toBe(0);
  });

  it("accounts for sub-second now", () => {
    const later = new Date(now.getTime() + 250);
    expect(retryAfterFromHeaders({ "retry-after": ["Wed, 21 Oct 2015 07:28:01 GMT"] }, later)).toBe(750);
  });

  it("ignores dates more than a day away", () => {
    expect(single("retry-after", "Thu, 22 Oct 2015 07:28:01 GMT")).toBeNull();
    expect(single("retry-after", "Fri, 01 Jan 2016 00:00:00 GMT")).toBeNull();
  });

  it.each([
    "Wed, 32 Oct 2015 07:28:00 GMT",
    "Wed, 21 Foo 2015 07:28:00 GMT",
    "Wed, 21 Oct 2015 25:28:00 GMT",
    "Wed, 21 Oct 2015 07:28:00 PST",
    "Wed, 21 Oct 2015 07:28:00",
    "21 Oct 2015 07:28:00 GMT",
    "2015-10-21T07:29:00Z",
    "Wed, 31 Feb 2015 07:28:00 GMT",
  ])("rejects malformed date %j", (value) => {
    expect(single("retry-after", value)).toBeNull();
  });
});

describe("retryAfterFromHeaders: Go durations", () => {
  it.each([
    ["6m5s", 365_000],
    ["1.5s", 1_500],
    ["300ms", 300],
    ["2h45m", 9_900_000],
    ["1h0m0s", 3_600_000],
    ["20ms", 20],
    ["1500us", 2],
    ["1000µs", 1],
    ["1000μs", 1],
    ["999999ns", 1],
    ["5000000ns", 5],
    ["0s", 0],
    ["0ms", 0],
    [".5s", 500],
    ["1m30.5s", 90_500],
    ["2.007s", 2_007],
    ["1.1s", 1_100],
    ["24h", 86_400_000],
  ])("reads %j", (value, ms) => {
    expect(single("x-ratelimit-reset-requests", value)).toBe(ms);
  });

  it("ignores durations above one day", () => {
    expect(single("x-ratelimit-reset-tokens", "24h0m0.001s")).toBeNull();
    expect(single("x-ratelimit-reset-tokens", "48h")).toBeNull();
  });

  it.each(["-1s", "+1s", "1S", "1 s", "s", "1.s5", "1x", "ms", "1e3ms", "1h-5m", "Infinity", "NaN"])(
    "rejects %j",
    (value) => {
      expect(single("x-ratelimit-reset-tokens", value)).toBeNull();
    },
  );
});

describe("retryAfterFromHeaders: header precedence", () => {
  it("returns null without any relevant header", () => {
    expect(retryAfterFromHeaders({}, now)).toBeNull();
    expect(retryAfterFromHeaders({ "content-type": ["text/plain"], "x-retry-after": ["5"] }, now)).toBeNull();
    expect(retryAfterFromHeaders({ "retry-after": [] }, now)).toBeNull();
  });

  it("prefers retry-after over the rate-limit headers", () => {
    const headers = {
      "x-ratelimit-reset-tokens": ["4s"],
      "x-ratelimit-reset-requests": ["3s"],
      "x-ratelimit-reset": ["2"],
      "retry-after": ["1"],
    };
    expect(retryAfterFromHeaders(headers, now)).toBe(1_000);
  });

  it("walks the rate-limit headers in order", () => {
    expect(
      retryAfterFromHeaders({ "x-ratelimit-reset": ["2"], "x-ratelimit-reset-requests": ["3s"] }, now),
    ).toBe(2_000);
    expect(
      retryAfterFromHeaders({ "x-ratelimit-reset-tokens": ["4s"], "x-ratelimit-reset-requests": ["3s"] }, now),
    ).toBe(3_000);
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-tokens": ["4s"] }, now)).toBe(4_000);
  });

  it("falls through unparseable values to the next header", () => {
    const headers = {
      "retry-after": ["soon"],
      "x-ratelimit-reset": [""],
      "x-ratelimit-reset-requests": ["6m0s"],
    };
    expect(retryAfterFromHeaders(headers, now)).toBe(360_000);
    expect(retryAfterFromHeaders({ "retry-after": ["nope"], "x-ratelimit-reset-tokens": ["nah"] }, now)).toBeNull();
  });

  it("uses the first parseable value of a repeated header", () => {
    expect(retryAfterFromHeaders({ "retry-after": ["garbage", "7"] }, now)).toBe(7_000);
    expect(retryAfterFromHeaders({ "retry-after": ["5", "7"] }, now)).toBe(5_000);
  });

  it("returns 0 when told to retry immediately, without consulting later headers", () => {
    expect(retryAfterFromHeaders({ "retry-after": ["0"], "x-ratelimit-reset": ["60"] }, now)).toBe(0);
  });

  it("returns null when the winning header asks for more than a day", () => {
    expect(retryAfterFromHeaders({ "retry-after": ["172800"], "x-ratelimit-reset-requests": ["1s"] }, now)).toBeNull();
  });

  it("only reads lower-case header names", () => {
    expect(retryAfterFromHeaders({ "Retry-After": ["5"] }, now)).toBeNull();
  });

  it("accepts the one-day boundary exactly", () => {
    expect(single("x-ratelimit-reset", String(RETRY_AFTER_MAX_MS / 1_000))).toBe(RETRY_AFTER_MAX_MS);
  });
});

describe("parseRetryAfterValue", () => {
  it("parses without the one-day bound", () => {
    expect(parseRetryAfterValue("172800", now)).toBe(172_800_000);
    expect(parseRetryAfterValue("48h", now)).toBe(172_800_000);
  });

  it("returns null for unparseable or non-finite values", () => {
    expect(parseRetryAfterValue("", now)).toBeNull();
    expect(parseRetryAfterValue("-5", now)).toBeNull();
    expect(parseRetryAfterValue(`${"9".repeat(400)}`, now)).toBeNull();
  });
});

describe("day durations from the workflow SDK", () => {
  it("reads 1d as one day, the longest delay still honoured", () => {
    expect(retryAfterFromHeaders({ "retry-after": ["1d"] }, new Date())).toBe(86_400_000);
    expect(retryAfterFromHeaders({ "retry-after": ["2d"] }, new Date())).toBeNull();
  });
});
