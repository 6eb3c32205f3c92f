/**
 * Redaction in the run logs (messages/redaction.ts): a run's trigger may ask to hide
 * the body or headers of its messages (`Redact-Fields`), and every message of
 * the run carries that request. A hidden body hides the data the run passes
 * around — its initial payload, step results, a call's request and response
 * bodies, an invoked run's payload and the run's result; hidden headers hide
 * the step headers, a call's request headers and an invoked run's headers.
 * Responses of failed attempts are what the workflow answered, not message
 * data, and stay visible.
 */
import type { RedactFields, Redactor } from "../../messages/redaction";
import type { EntryRow, RunRow } from "./query";
import type { StepGroup, StepLog } from "./steps";

/** The run's result as the log shows it. */
export function redactRunResponse(response: string, run: RunRow, redactor: Redactor): string {
  return redactor.hidesBody(run.config.redactFields ?? null) ? redactor.value(response) : response;
}

/** Step groups of `run` with what its messages (`entries`) ask to hide hidden. */
export function redactStepGroups(groups: StepGroup[], run: RunRow, entries: EntryRow[], redactor: Redactor): StepGroup[] {
  const runFields = run.config.redactFields ?? null;
  if (runFields === null && entries.every((entry) => entry.redactFields === null)) return groups;
  const fieldsOf = new Map(entries.map((entry) => [entry.messageId, entry.redactFields ?? runFields]));
  const step = (s: StepLog) => redactStep(s, fieldsOf.get(s.messageId) ?? runFields, redactor);
  return groups.map((group) =>
    group.type === "sequential"
      ? { type: "sequential", steps: [step(group.steps[0])] }
      : { type: "parallel", steps: group.steps.map(step) },
  );
}

function redactStep(step: StepLog, fields: RedactFields, redactor: Redactor): StepLog {
  const body = redactor.hidesBody(fields);
  const hide = (value: string | undefined) => (body && value !== undefined && value !== "" ? redactor.value(value) : value);
  const headers = (value: Record<string, string[]> | undefined) => value && redactor.headers(value, fields);
  return {
    ...step,
    ...(step.out !== undefined && body && { out: hide(typeof step.out === "string" ? step.out : JSON.stringify(step.out)) }),
    headers: redactor.headers(step.headers, fields),
    ...(step.callHeaders !== undefined && { callHeaders: headers(step.callHeaders) }),
    ...(step.callBody !== undefined && { callBody: hide(step.callBody) }),
    ...(step.callResponseBody !== undefined && { callResponseBody: hide(step.callResponseBody) }),
    ...(step.invokedWorkflowRunBody !== undefined && { invokedWorkflowRunBody: hide(step.invokedWorkflowRunBody) }),
    ...(step.invokedWorkflowRunHeaders !== undefined && {
      invokedWorkflowRunHeaders: headers(step.invokedWorkflowRunHeaders),
    }),
  };
}
