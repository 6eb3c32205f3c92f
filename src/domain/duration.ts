const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;
type Unit = keyof typeof UNIT_MS;
const UNITS_DESCENDING: readonly Unit[] = ["d", "h", "m", "s"];

const BARE_SECONDS = /^\d+$/;
const COMPOUND = /^(?:\d+[dhms])+$/i;
const COMPONENT = /(\d+)([dhms])/gi;

/**
 * Parses a duration such as `90s`, `2h` or `1d10h30m` into milliseconds.
 * Units are `d`, `h`, `m`, `s` (case-insensitive), each used at most once and
 * in descending order. A bare non-negative integer is read as seconds.
 * Returns null for anything else, or when the result exceeds
 * `Number.MAX_SAFE_INTEGER` milliseconds.
 */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (BARE_SECONDS.test(trimmed)) return safeProduct(Number(trimmed), 1_000);
  if (!COMPOUND.test(trimmed)) return null;
  let total = 0;
  let lastRank = -1;
  for (const [, digits, rawUnit] of trimmed.matchAll(COMPONENT)) {
    const unit = rawUnit!.toLowerCase() as Unit;
    const rank = UNITS_DESCENDING.indexOf(unit);
    if (rank <= lastRank) return null;
    lastRank = rank;
    const part = safeProduct(Number(digits), UNIT_MS[unit]);
    if (part === null) return null;
    total += part;
    if (!Number.isSafeInteger(total)) return null;
  }
  return total;
}

/**
 * Formats milliseconds for display using the largest unit (`d`, `h`, `m`)
 * that divides the value evenly, falling back to (possibly fractional)
 * seconds: 120000 → "2m", 3600000 → "1h", 90000 → "90s", 1500 → "1.5s".
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return `${ms}`;
  if (ms !== 0) {
    for (const unit of UNITS_DESCENDING) {
      if (unit !== "s" && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
    }
  }
  return `${ms / 1_000}s`;
}

function safeProduct(value: number, factor: number): number | null {
  const product = value * factor;
  return Number.isSafeInteger(value) && Number.isSafeInteger(product) ? product : null;
}
