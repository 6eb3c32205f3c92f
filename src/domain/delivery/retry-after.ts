/** Headers consulted, in order of precedence, for a server-requested delay. */
export const RETRY_AFTER_HEADERS = [
  "retry-after",
  "x-ratelimit-reset",
  "x-ratelimit-reset-requests",
  "x-ratelimit-reset-tokens",
] as const;

/** Longest server-requested delay honoured; anything longer is ignored. */
export const RETRY_AFTER_MAX_MS = 86_400_000;

const SECONDS = /^\d+(?:\.\d+)?$/;
const GO_DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))+$/;
const GO_COMPONENT = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g;
const GO_UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000,
  // Not a Go unit: the workflow SDK's WorkflowRetryAfterError may say "1d" (docs/workflow-protocol.md §10).
  d: 86_400_000,
};

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const IMF_FIXDATE = /^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const RFC_850 = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

/**
 * Returns the delay in milliseconds a response asks for before retrying, or
 * null when none applies. Header names must be lower-case. Consults
 * `retry-after`, `x-ratelimit-reset`, `x-ratelimit-reset-requests` and
 * `x-ratelimit-reset-tokens` in that order; the first parseable value wins.
 * Values may be seconds (`120`, `1.5`), an HTTP date (delay until then,
 * floored at 0) or a Go duration (`6m5s`, `300ms`). Fractional milliseconds
 * round up. A winning delay above one day yields null.
 */
export function retryAfterFromHeaders(headers: Record<string, string[]>, now: Date): number | null {
  for (const name of RETRY_AFTER_HEADERS) {
    for (const value of headers[name] ?? []) {
      const delay = parseRetryAfterValue(value, now);
      if (delay !== null) return delay <= RETRY_AFTER_MAX_MS ? delay : null;
    }
  }
  return null;
}

/**
 * Parses one header value (seconds, HTTP date or Go duration) into a
 * non-negative whole number of milliseconds, or null if unparseable.
 * No upper bound is applied.
 */
export function parseRetryAfterValue(value: string, now: Date): number | null {
  const text = value.trim();
  const ms = SECONDS.test(text) ? Number(text) * 1_000 : (parseGoDuration(text) ?? untilHttpDate(text, now));
  return ms === null || !Number.isFinite(ms) ? null : ceilMs(ms);
}

/** Rounds up to whole milliseconds, ignoring binary floating-point noise. */
function ceilMs(ms: number): number {
  return Math.ceil(Math.round(ms * 1e6) / 1e6);
}

function parseGoDuration(text: string): number | null {
  if (!GO_DURATION.test(text)) return null;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(GO_COMPONENT)) total += Number(amount) * GO_UNIT_MS[unit!]!;
  return total;
}

function untilHttpDate(text: string, now: Date): number | null {
  const time = parseHttpDate(text);
  return time === null ? null : Math.max(0, time - now.getTime());
}

function parseHttpDate(text: string): number | null {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(m[3]!, m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = RFC_850.exec(text);
  if (m) return utc(expandTwoDigitYear(m[3]!), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = ASCTIME.exec(text);
  if (m) return utc(m[6]!, m[1]!, m[2]!, m[3]!, m[4]!, m[5]!);
  return null;
}

function expandTwoDigitYear(yy: string): string {
  const year = Number(yy);
  return String(year >= 70 ? 1900 + year : 2000 + year);
}

function utc(
  year: string,
  monthName: string,
  day: string,
  hour: string,
  minute: string,
  second: string,
): number | null {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  const parts = [Number(year), month, Number(day), Number(hour), Number(minute), Number(second)] as const;
  const date = new Date(Date.UTC(...parts));
  const valid =
    month >= 0 &&
    date.getUTCFullYear() === parts[0] &&
    date.getUTCMonth() === month &&
    date.getUTCDate() === parts[2] &&
    date.getUTCHours() === parts[3] &&
    date.getUTCMinutes() === parts[4] &&
    date.getUTCSeconds() === parts[5];
  return valid ? date.getTime() : null;
}
