/**
 * The most of `times` (ms) that fall within any one window of `windowMs`: a
 * sliding-window rate as a receiver saw it. Pure, so the benchmark
 * (bench/flow-control.ts) measures with the same function the tests assert with.
 */
export function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
