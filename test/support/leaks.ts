/**
 * Fails a test that leaves running what it started: a Dispatch service or a
 * receiver started during a test must be stopped by the end of that test, and
 * one started for a whole file (in `beforeAll`) by the end of the file.
 * Services and receivers register here; the checks run from
 * no-internal-errors.ts, the setup file of every test file.
 */

const running = new Map<number, string>();
let next = 0;

/** Registers something running, described by `what`; the returned function marks it stopped. */
export function track(what: string): () => void {
  const id = next++;
  running.set(id, what);
  return () => void running.delete(id);
}

/** What is running now, by registration id. */
export const runningNow = (): Set<number> => new Set(running.keys());

/** What was started since `before` and is still running. */
export function leftRunning(before: Set<number>): string[] {
  return [...running].filter(([id]) => !before.has(id)).map(([, what]) => what);
}
