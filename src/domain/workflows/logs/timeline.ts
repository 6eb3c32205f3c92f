/**
 * How long each step of a run took, for its timeline. A step runs while the
 * message before it is delivered: the SDK executes the next step during a
 * delivery and answers by publishing its result (docs/workflow-protocol.md
 * §4, §5). So a result step spans from the first attempt of the message that
 * ran it (the entry before it, or its plan entry in a parallel group, §5.3)
 * to when its result was recorded; retries, waits and calls fall inside. A
 * sleep spans from when it was scheduled to when its message was first
 * delivered. A message under way, failed or cancelled, and the failure
 * function's, spans its own attempts.
 */
import type { Tx } from "../../../db/client";
import { isPendingState } from "../../../db/vocabulary";
import type { EntryRow } from "./query";
import { parseStep, readResults, type StepJson } from "./steps";

/** When something began and ended (Unix ms); `end` is null while it is under way. */
export interface Span {
  start: number;
  end: number | null;
}

/** Where a message of the run stands, and when it was attempted. */
export interface MessageTimes {
  messageId: string;
  state: string;
  /** Set while the message is on the work list (domain/messages/retry-now.ts `waitsOnBackoff`). */
  dueAt: Date | null;
  createdAt: Date;
  completedAt: Date | null;
  firstAttemptAt: Date | null;
  lastAttemptEndedAt: Date | null;
}

/**
 * The spans of a run: of its result steps, by the message carrying the
 * result, and of its messages' own deliveries (a step under way, failed or
 * cancelled, a failed parallel branch, the failure function), by message.
 */
export interface RunTimeline {
  results: Map<string, Span>;
  deliveries: Map<string, Span>;
  messages: Map<string, MessageTimes>;
}

/** The state and attempt times of the messages `ids` (by `messages_pkey` and `attempts_message_id_idx`). */
export function selectMessageTimes(tx: Tx, project: string, ids: string[]): Promise<MessageTimes[]> {
  return tx<MessageTimes[]>`
    select m.id as "messageId", m.state, m.due_at as "dueAt", m.created_at as "createdAt",
      m.completed_at as "completedAt", a.first as "firstAttemptAt", a.last as "lastAttemptEndedAt"
    from dispatch.messages m
    left join lateral (
      select min(started_at) as first, max(started_at + duration_ms * interval '1 millisecond') as last
      from dispatch.attempts where project = ${project} and message_id = m.id
    ) a on true
    where m.project = ${project} and m.id = any(${ids}::text[])`;
}

/** The timeline of a run's step list `entries`, from its messages' `times`. */
export function runTimeline(entries: EntryRow[], times: MessageTimes[]): RunTimeline {
  const messages = new Map(times.map((t) => [t.messageId, t]));
  const firstAttempt = (entry: EntryRow) => (messages.get(entry.messageId)?.firstAttemptAt ?? null)?.getTime() ?? null;
  const results = new Map<string, Span>();
  for (const { entry, step } of readResults(entries)) {
    const runner = runnerOf(entry, step, entries);
    if (runner === undefined) continue;
    const sleeps = step.stepType === "SleepFor" || step.stepType === "SleepUntil";
    // A sequential sleep is its own message, delivered when the sleep ends; a parallel one is its plan's (§5.3).
    const sleeper = (step.concurrent ?? 1) > 1 ? runner : entry;
    const span = sleeps
      ? { start: sleeper.createdAt.getTime(), end: firstAttempt(sleeper) }
      : { start: firstAttempt(runner) ?? runner.createdAt.getTime(), end: entry.createdAt.getTime() };
    results.set(entry.messageId, span);
  }
  const deliveries = new Map<string, Span>();
  for (const t of times) deliveries.set(t.messageId, deliverySpan(t));
  return { results, deliveries, messages };
}

/** The entry whose delivery ran the step `step` (carried by `entry`): its plan entry in a parallel group, else the step entry before it. */
function runnerOf(entry: EntryRow, step: StepJson, entries: EntryRow[]): EntryRow | undefined {
  const before = entries.slice(0, entries.indexOf(entry)).filter((e) => e.callType === "step");
  return (step.concurrent ?? 1) > 1 ? before.find((e) => parseStep(e.body)?.targetStep === step.stepId) : before.at(-1);
}

/** A message's own delivery: from its first attempt (or its creation) until its last attempt ended, or on while pending. */
function deliverySpan(t: MessageTimes): Span {
  const start = (t.firstAttemptAt ?? t.createdAt).getTime();
  if (isPendingState(t.state)) return { start, end: null };
  return { start, end: Math.max(start, (t.lastAttemptEndedAt ?? t.completedAt ?? t.createdAt).getTime()) };
}
