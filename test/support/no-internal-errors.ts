/**
 * Fails any test during which a service of this test file (in-process, or a
 * child process started by the test) rendered a 500:
 * an internal error is a defect even when the test's own assertions pass.
 * Registered for every file in vitest.config.ts.
 */
import { afterEach } from "vitest";

const seen: string[] = [];

/** Records a service log line if it reports an internal error. */
export function noteLogLine(line: string): void {
  if (line.startsWith("internal error")) seen.push(line);
}

afterEach(() => {
  const errors = seen.splice(0);
  if (errors.length > 0) throw new Error(`the service answered 500 during this test:\n${errors.join("\n")}`);
});
