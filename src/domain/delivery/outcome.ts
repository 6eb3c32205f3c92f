/**
 * What happens after an attempt: the message's new state, its events, a retry,
 * the dead letter queue, callbacks and failure callbacks — all in one
 * transaction, so a crash leaves either none or all of it.
 */
import { byProject } from "../../db/citus/by-project";
import { byteaBatch, byteaSlice } from "../../db/bytea-batch";
import type { Tx } from "../../db/client";
import type { ClaimedMessage } from "../../db/queries/claim-messages";
import { recordDeliveredMessage } from "../../db/queries/record-delivered";
import { recordFailed } from "../../db/queries/record-failed";
import { recordRetry, retryAt } from "../../db/queries/record-retry";
import { returnProbeToLine } from "../../db/queries/destination-lines";
import type { CircuitChange } from "../../db/queries/destination-health";
import { type CircuitSettings, settleProbe } from "../destinations/circuit";
import { isPendingState, type MessageState } from "../../db/vocabulary";
import { releaseDeliveries } from "../flow-control/admission";
import { newDlqId } from "../ids";
import type { StoredMessage } from "../messages/message";
import type { NewMessage } from "../messages/new-message";
import { startQueuedMessages } from "../messages/queue-admission";
import { insertMessages } from "../publish/insert";
import type { MessageSettings } from "../publish/options";
import type { Attempt, Outcome } from "./attempt";
import { buildCallbackMessage, callbackBody, callbackDue, type CallbackKind } from "./callbacks";
import { runHooks } from "./run-hooks";

/** One finished attempt of a claimed message and what it leads to. */
export interface AttemptRecord {
  message: ClaimedMessage;
  attempt: Attempt;
  outcome: Outcome;
  /** Whether it was the probe of its destination's open circuit (its outcome settles the circuit). */
  probe?: boolean;
}

/**
 * Whether an outcome takes the one-statement path (`record-delivered.ts`):
 * delivered, not queued, no callback and not a failure function. Everything
 * else is recorded by `recordOutcomes`.
 */
export function isPlainDelivery({ message, outcome, probe }: AttemptRecord): boolean {
  return (
    outcome.kind === "delivered" &&
    !probe &&
    message.queueName === null &&
    message.flowControlKey === null &&
    message.workflowCallType !== "failureCall" &&
    !callbackDue(message, true)
  );
}

/** What recording outcomes needs: how the messages it publishes are stored, and how a probe settles its circuit. */
export interface OutcomeSettings extends MessageSettings {
  circuits: CircuitSettings;
}

/** What an attempt's row in the attempt log says beyond the attempt itself. */
interface AttemptNotes {
  /** The delay of the retry it led to (due at the message's new `next_delivery_at`); null when none. */
  retryDelayMs: number | null;
  /** Why it failed the message for good. */
  failure: string | null;
  /** Problems after it (a callback that could not be sent). */
  notes: string[];
}

/**
 * Whether recording `record` may change its message's workflow run: a final
 * failure fails the run (and cancels its other steps); a failure function's
 * end is recorded on it. A delivered or retried step leaves the run alone.
 */
function changesRun(record: AttemptRecord): boolean {
  const { outcome, message } = record;
  return outcome.kind === "failed" || (message.workflowCallType === "failureCall" && outcome.kind !== "retry");
}

/**
 * Records finished attempts in the caller's transaction (many at once: the
 * worker batches them). The message rows are locked and re-read: one that a
 * cancel (or a redelivery after a sweep) changed meanwhile keeps only its
 * attempt's row in the log — the in-flight attempt may land, nothing new starts.
 * Returns the circuits its probes closed or opened again.
 */
export async function recordOutcomes(tx: Tx, records: AttemptRecord[], settings: OutcomeSettings): Promise<CircuitChange[]> {
  // The runs this changes first, then the messages in one order, by project and id (as every transaction that locks
  // several messages does): two workers recording overlapping batches, or a run cancelled while its step
  // fails, wait for each other instead of deadlocking.
  await runHooks().lockRuns(tx, records.filter(changesRun).map((record) => record.message));
  const current = new Map<string, { id: string; state: MessageState; claimId: number | null }>();
  for (const [project, inProject] of byProject(records, (record) => record.message.project)) {
    const ids = [...new Set(inProject.map((record) => record.message.id))].sort();
    const rows = await tx<{ id: string; state: MessageState; claimId: number | null }[]>`
      select id, state, claim_id as "claimId" from dispatch.messages
      where project = ${project} and id = any(${ids}::text[]) order by id for update`;
    for (const row of rows) current.set(row.id, row);
  }
  // The attempts come first in the log, before the callback messages their outcomes publish.
  const positions = await reserveLogPositions(tx, records.length);
  const notes = records.map((): AttemptNotes => ({ retryDelayMs: null, failure: null, notes: [] }));
  // Every attempt is over, recorded or overtaken by a cancel: it frees its flow-control slot, before a
  // transition (a failed probe back into its line) lets go of the claim the slot is freed under.
  await releaseDeliveries(tx, records.map((record) => record.message));
  const claimed = new Set<string>();
  const changes: CircuitChange[] = [];
  for (const [i, record] of records.entries()) {
    // An optimisation: each transition guards itself in SQL too (db/queries/work-list.ts).
    const row = current.get(record.message.id);
    const fresh = row && isPendingState(row.state) && row.claimId === record.message.claimId;
    if (record.probe) {
      const { outcome } = record;
      const change = await settleProbe(tx, record.message, outcome.kind === "held" ? outcome.error : null, settings.circuits);
      if (change !== null) changes.push(change);
    }
    if (!fresh || claimed.has(record.message.id)) continue;
    claimed.add(record.message.id);
    await finish(tx, record, settings, notes[i]!);
  }
  await insertAttempts(tx, records, positions, notes);
  return changes;
}

async function finish(tx: Tx, record: AttemptRecord, settings: MessageSettings, notes: AttemptNotes): Promise<void> {
  const { message, attempt, outcome } = record;
  if (outcome.kind === "held") {
    if (await returnProbeToLine(tx, message)) notes.notes.push(HELD_NOTE);
    return;
  }
  const final = outcome.kind !== "retry";
  const extra = await runHooks().callbackFields(tx, message, final);
  if (outcome.kind === "delivered") {
    if (!(await recordDeliveredMessage(tx, message))) return;
  } else if (outcome.kind === "retry") {
    if (!(await recordRetry(tx, message, outcome.delayMs))) return;
    notes.retryDelayMs = outcome.delayMs;
  } else if (!(await markFailed(tx, record, outcome.error, settings, extra, notes))) {
    return;
  }
  await runHooks().recordFailureFunction(tx, message, attempt, outcome);
  // A finished queued message frees its slot for the next one in line.
  if (final && message.queueName !== null) await startQueuedMessages(tx, { project: message.project, name: message.queueName });
  if (callbackDue(message, final)) {
    const body = { ...callbackBody(message, attempt, null), ...extra };
    await sendCallback(tx, "callback", message, body, settings, notes);
  }
}

/** What the log says of a failed probe. */
const HELD_NOTE = "the probe of its destination's open circuit failed: back in the destination's line, no retry spent";

/** Takes `count` positions in the log (the messages' `seq` sequence), in order. */
async function reserveLogPositions(tx: Tx, count: number): Promise<number[]> {
  const [row] = await tx<{ positions: string[] }[]>`
    select array(select nextval('dispatch.messages_seq_seq') from generate_series(1, ${count}::int)) as positions`;
  return row!.positions.map(Number);
}

/** One row per attempt in the attempt log, at its reserved position; responses kept for unsuccessful ones. */
async function insertAttempts(tx: Tx, records: AttemptRecord[], positions: number[], notes: AttemptNotes[]): Promise<void> {
  const rows = records.map(({ message, attempt, outcome }, i) => {
    const delivered = outcome.kind === "delivered";
    const response = attempt.kind === "response" ? attempt : null;
    return {
      id: positions[i]!,
      messageId: message.id,
      project: message.project,
      retried: message.retried,
      startedAt: attempt.startedAt.toISOString(),
      durationMs: attempt.durationMs,
      result: delivered ? "DELIVERED" : "ERROR",
      status: response?.status ?? null,
      headers: !delivered && response ? JSON.stringify(response.headers) : null,
      body: !delivered && response ? response.body : null,
      error: delivered ? null : outcome.error,
      retryDelayMs: notes[i]!.retryDelayMs,
      failure: notes[i]!.failure,
      note: notes[i]!.notes.length === 0 ? null : notes[i]!.notes.join("; "),
    };
  });
  const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
  const bodies = byteaBatch(column((r) => r.body));
  await tx`
    insert into dispatch.attempts (id, message_id, project, retried, started_at, duration_ms, result, response_status,
      response_headers, response_body, error, next_attempt_at, failure, note)
    select a.id, a.message_id, a.project, a.retried, a.started_at, a.duration_ms, a.result, a.status, a.headers::jsonb,
      ${byteaSlice(tx, bodies, "a.body_offset", "a.body_length")},
      a.error, ${retryAt(tx, tx`a.retry_delay_ms`)},
      a.failure, a.note
    from unnest(${column((r) => r.id)}::bigint[], ${column((r) => r.messageId)}::text[], ${column((r) => r.project)}::text[],
      ${column((r) => r.retried)}::int[],
      ${column((r) => r.startedAt)}::timestamptz[], ${column((r) => r.durationMs)}::int[], ${column((r) => r.result)}::text[],
      ${column((r) => r.status)}::int[], ${column((r) => r.headers)}::text[], ${bodies.offsets}::int[], ${bodies.lengths}::int[],
      ${column((r) => r.error)}::text[], ${column((r) => r.retryDelayMs)}::float8[], ${column((r) => r.failure)}::text[],
      ${column((r) => r.note)}::text[])
      as a(id, message_id, project, retried, started_at, duration_ms, result, status, headers, body_offset, body_length, error, retry_delay_ms,
        failure, note)`;
}

/**
 * Retries are exhausted (or the destination said not to retry): FAILED, DLQ,
 * failure callback — and for a workflow step, the run fails. A workflow's
 * third-party call is not dead-lettered: its final callback carries the error.
 * False when a cancel or a sweep got there first (nothing is then recorded).
 */
async function markFailed(
  tx: Tx,
  { message, attempt }: AttemptRecord,
  error: string,
  settings: MessageSettings,
  extra: Record<string, unknown>,
  notes: AttemptNotes,
): Promise<boolean> {
  const response = attempt.kind === "response" ? attempt : null;
  if (!(await recordFailed(tx, message))) return false;
  notes.failure = error;
  if (message.workflowCallType === "toCallback") return true;
  const dlqId = newDlqId();
  await tx`
    insert into dispatch.dlq (dlq_id, project, message_id, error, response_status, response_headers, response_body)
    values (${dlqId}, ${message.project}, ${message.id}, ${error}, ${response?.status ?? null},
            ${response ? tx.json(response.headers) : null}, ${response?.body ?? null})`;
  const body = { ...callbackBody(message, attempt, dlqId), ...extra };
  const failureCallbackId = await sendCallback(tx, "failure_callback", message, body, settings, notes);
  if (runHooks().failsRun(message)) await runHooks().failRun(tx, message, attempt, { dlqId, failureCallbackId }, settings);
  return true;
}

/**
 * Publishes the callback message of `kind`, if the message has one. Its
 * headers were validated at publish; should they no longer pass (limits
 * lowered since), the problem is noted on the attempt instead.
 */
async function sendCallback(
  tx: Tx,
  kind: CallbackKind,
  message: StoredMessage,
  body: Record<string, unknown>,
  settings: MessageSettings,
  notes: AttemptNotes,
): Promise<string | null> {
  let callback: NewMessage | null;
  try {
    callback = buildCallbackMessage(kind, message, body, settings.limits);
  } catch (error) {
    notes.notes.push(`${kind.replace("_", " ")} not sent: ${(error as Error).message}`);
    return null;
  }
  if (!callback) return null;
  const [published] = await insertMessages(tx, [callback], settings);
  return published!.messageId;
}
