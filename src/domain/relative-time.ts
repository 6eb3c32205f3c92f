/**
 * How far a time is from now, in words: `in 2 min`, `3 h ago`, as the
 * dashboard (its pages and its script) and the CLI say it. Rounded to the
 * nearest whole unit, never down: 119 s is "2 min", not "1 min"; the unit is
 * chosen once rounded, so 59.6 s is "1 min", not "60 s", and 23 h 40 min is
 * "1 d". The dashboard's browser script runs this very function, from its
 * source: it uses nothing but its arguments and `Math`.
 */
export function relativeTime(at: number, now: number): string {
  const delta = at - now;
  const abs = Math.abs(delta);
  // Each unit in milliseconds, with the count from which the next unit says it.
  const units: [number, string, number][] = [
    [1000, "s", 60],
    [60000, "min", 60],
    [3600000, "h", 24],
    [86400000, "d", Infinity],
  ];
  let text = "";
  for (const [size, unit, upTo] of units) {
    const count = Math.round(abs / size);
    if (count < upTo) {
      text = count + " " + unit;
      break;
    }
  }
  return delta < 0 ? text + " ago" : "in " + text;
}
