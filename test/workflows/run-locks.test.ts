/**
 * A run and its steps are locked run first: a step that fails its run (which
 * cancels the run's other steps) and a cancel of the run (which cancels its
 * steps) wait for each other instead of deadlocking.
 */
import { expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { waitingOnLocks } from "../support/locks";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { messagesWhere, storedRun } from "../support/rows";
import { useDispatch } from "../support/service";

const lines: string[] = [];
const dispatch = useDispatch({}, { log: (line) => lines.push(line) });
let answer: (() => void) | undefined;
/** Answers 500 (the step fails for good: no retries) once the test lets it. */
const endpoint = useReceiver(async () => {
  await new Promise<void>((resolve) => (answer = resolve));
  return { status: 500, body: "failed on purpose" };
});

it("records a step that fails its run while a cancel holds the run and then asks for the step: both finish", async () => {
  const response = await dispatch.api(`/v2/trigger/${endpoint.url}/fails`, { method: "POST", headers: { "Upstash-Retries": "0" }, body: "{}" });
  const { workflowRunId } = await response.json();
  await endpoint.waitFor(1);
  const [step] = await messagesWhere(dispatch, { workflowRunIds: [workflowRunId] });
  const cancel = createSql(dispatch.config.databaseUrl!, 1);
  const observer = createSql(dispatch.config.databaseUrl!, 1);
  try {
    // What a cancel of the run does: the run's lock, then its steps'.
    await cancel.begin(async (tx) => {
      await tx`select pk from dispatch.workflow_runs where run_id = ${workflowRunId} for update`;
      answer!();
      await poll(async () => (await waitingOnLocks(observer)) >= 1, "the step's outcome waiting for a lock this transaction holds");
      await tx`select id from dispatch.messages where id = ${step!.id} for update`;
    });
  } finally {
    await Promise.all([cancel.end(), observer.end()]);
  }
  await poll(async () => (await storedRun(dispatch, workflowRunId))?.state === "RUN_FAILED", "the run failed by its step");
  expect(lines.filter((line) => /deadlock/i.test(line))).toEqual([]);
});
