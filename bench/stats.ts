/** Small statistics shared by the helpers and the orchestrator. */

/** Percentiles of a set of durations, in milliseconds (null when there were none). */
export interface Percentiles {
  count: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/** p50/p99/max of `values` (nearest-rank); sorts a copy. */
export function percentiles(values: ArrayLike<number>): Percentiles {
  const sorted = Float64Array.from(values).sort();
  const rank = (q: number) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
  return { count: sorted.length, p50: rank(0.5), p99: rank(0.99), max: rank(1) };
}

/** A growable list of numbers kept in typed arrays, cheap at hundreds of thousands of samples. */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  values(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection naming `what` once `ms` milliseconds have passed. */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
