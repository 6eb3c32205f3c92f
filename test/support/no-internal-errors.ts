/**
 * Fails any test during which a service of this test file (in-process, or a
 * child process started by the test) rendered a 500:
 * an internal error is a defect even when the test's own assertions pass.
 * Also fails a test that leaves a service or receiver it started running
 * (leaks.ts), and a file that leaves one of its own running.
 * Registered for every file in vitest.config.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { leftRunning, runningNow } from "./leaks";

const seen: string[] = [];

/** Records a service log line if it reports an internal error. */
export function noteLogLine(line: string): void {
  if (line.startsWith("internal error")) seen.push(line);
}

afterEach(() => {
  const errors = seen.splice(0);
  if (errors.length > 0) throw new Error(`the service answered 500 during this test:\n${errors.join("\n")}`);
});

let beforeFile = new Set<number>();
let beforeTest = new Set<number>();
beforeAll(() => void (beforeFile = runningNow()));
beforeEach(() => void (beforeTest = runningNow()));

afterEach(() => {
  const left = leftRunning(beforeTest);
  if (left.length > 0) throw new Error(`this test left running what it started: ${left.join(", ")}`);
});

afterAll(() => {
  const left = leftRunning(beforeFile);
  if (left.length > 0) throw new Error(`this file left running what it started: ${left.join(", ")}`);
});
