/**
 * The words stored in state and kind columns, as typed unions, each with who
 * moves rows in and out of it. The CHECK constraints in `schema.ts` are made
 * from the same lists, and `isPending` is the one spelling of "not finished".
 */
import type { Tx } from "./client";

/** The project that owns what was there before projects existed, and whatever a single-team Dispatch holds. */
export const DEFAULT_PROJECT = "default";

/**
 * States of a message (`dispatch.messages.state`).
 * - CREATED: stored by a publish, a callback or a workflow step (`insert-messages.ts`).
 * - RETRY: an attempt failed and another is due (`outcome.ts`, scheduleRetry).
 * - DELIVERED: an attempt succeeded (`record-delivered.ts`, `outcome.ts`). Final.
 * - FAILED: retries exhausted or not retryable (`outcome.ts`, markFailed). Final.
 * - CANCELED: cancelled while pending (`cancel.ts`: the API, queue deletion, workflow ends). Final.
 */
export const MESSAGE_STATES = ["CREATED", "RETRY", "DELIVERED", "FAILED", "CANCELED"] as const;
export type MessageState = (typeof MESSAGE_STATES)[number];

/** The states of a message that is not finished: it has an attempt due, in flight or waiting for a queue slot. */
export const PENDING_STATES = ["CREATED", "RETRY"] as const satisfies readonly MessageState[];

/** Whether a message in `state` has not finished: an attempt is due, in flight or waiting for a queue slot. */
export const isPendingState = (state: string) => (PENDING_STATES as readonly string[]).includes(state);

/** `column in ('CREATED', 'RETRY')`: the message is pending. */
export function isPending(tx: Tx, column = "state") {
  return tx.unsafe(pendingSql(column));
}

/** The same condition as SQL text, for statements written as text. */
export function pendingSql(column = "state"): string {
  return `${column} in (${sqlList(PENDING_STATES)})`;
}

/** Events of the log (`dispatch.message_events`; the view derives them from messages and attempts). */
export const EVENT_STATES = [
  "CREATED", "ACTIVE", "RETRY", "ERROR", "DELIVERED", "FAILED", "CANCEL_REQUESTED", "CANCELED",
] as const;
export type EventState = (typeof EVENT_STATES)[number];

/** What an attempt led to at the destination (`dispatch.attempts.result`, written with its outcome). */
export const ATTEMPT_RESULTS = ["DELIVERED", "ERROR"] as const;
export type AttemptResult = (typeof ATTEMPT_RESULTS)[number];

/** Why a message exists (`messages.origin`), set once when it is stored; `operator_event`: an event for the operator (domain/operator-events/). */
export const MESSAGE_ORIGINS = ["publish", "callback", "failure_callback", "workflow", "operator_event"] as const;
export type MessageOrigin = (typeof MESSAGE_ORIGINS)[number];

/** Header dialect a message was published in: native `Svc-` or the hosted service's `Upstash-`. */
export const DIALECTS = ["svc", "upstash"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** A workflow message's role in its run (docs/workflow-protocol.md §2.1); `callType` in the step list. Set once. */
export const WORKFLOW_CALL_TYPES = ["step", "toCallback", "fromCallback", "failureCall"] as const;
export type WorkflowCallType = (typeof WORKFLOW_CALL_TYPES)[number];

/**
 * States of a workflow run (`workflow_runs.state`).
 * - RUN_STARTED: the init message bound a new run (`workflows/binding.ts`).
 * - RUN_SUCCESS / RUN_CANCELED: the SDK ended it, or it was cancelled (`workflows/runs.ts`, `lifecycle.ts`). Final.
 * - RUN_FAILED: a step failed for good (`lifecycle.ts`, failRun). Final, until resumed or restarted (`resume.ts`).
 */
export const RUN_STATES = ["RUN_STARTED", "RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"] as const;
export type RunState = (typeof RUN_STATES)[number];

/**
 * States of a failed run's failure function (`workflow_runs.failure_callback_state`; null when none runs).
 * - CALLBACK_INPROGRESS: sent when the run failed (`lifecycle.ts`) or re-sent (`resume.ts`).
 * - CALLBACK_SUCCESS / CALLBACK_FAIL: its delivery's outcome (`lifecycle.ts`, recordFailureFunction).
 */
export const FAILURE_FUNCTION_STATES = ["CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL"] as const;
export type FailureFunctionState = (typeof FAILURE_FUNCTION_STATES)[number];

/**
 * States of a destination's circuit (`dispatch.destinations.circuit`, domain/destinations/circuit.ts).
 * - CLOSED: attempts flow; failures are counted.
 * - OPEN: it failed too often (or was opened by hand): its due messages wait, spending no retries, until a probe.
 * - PROBING: one attempt is under way; its outcome closes the circuit or opens it again for longer.
 * - GAVE_UP: open past the bound: its messages are attempted again and run out their own retries.
 */
export const CIRCUIT_STATES = ["CLOSED", "OPEN", "PROBING", "GAVE_UP"] as const;
export type CircuitState = (typeof CIRCUIT_STATES)[number];

/** `'A','B'`: a list for an SQL `in (...)` or CHECK constraint. */
export function sqlList(words: readonly string[]): string {
  return words.map((word) => `'${word}'`).join(",");
}
