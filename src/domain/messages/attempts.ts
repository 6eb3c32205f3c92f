/**
 * A message's attempts, from the attempt log (`dispatch.attempts`, read
 * through its index on `(message_id, id)`), and what else names the message:
 * its DLQ entry, its workflow run, the callbacks it made. Messages logged
 * before the attempt log have their attempts only in the legacy events.
 */
import type { Tx } from "../../db/client";
import type { AttemptResult } from "../../db/vocabulary";

/** One delivery attempt and what it led to. */
export interface AttemptLog {
  retried: number;
  startedAt: Date;
  durationMs: number;
  result: AttemptResult;
  responseStatus: number | null;
  /** Kept for unsuccessful attempts only. */
  responseHeaders: Record<string, string[]> | null;
  responseBody: Buffer | null;
  error: string | null;
  /** When the retry it led to is due. */
  nextAttemptAt: Date | null;
  /** Why it failed the message for good. */
  failure: string | null;
  note: string | null;
}

/** An attempt's answer as lists and the "why" panels show it: its status, its error and the start of its body. */
export interface LastAnswer {
  /** Null when the attempt got no response (a network error, a timeout). */
  status: number | null;
  error: string | null;
  /** At most the first `ANSWER_BYTES` of the response body, when one was kept. */
  body: Buffer | null;
}

/** How much of a response body a `LastAnswer` holds. */
export const ANSWER_BYTES = 2048;

/** The last attempt's answer of message `id` (`attempts_message_id_idx`, backward); null before the first attempt. */
export async function lastAnswer(tx: Tx, id: string): Promise<LastAnswer | null> {
  const [row] = await tx<LastAnswer[]>`
    select response_status as status, error, substring(response_body from 1 for ${ANSWER_BYTES}) as body
    from dispatch.attempts where message_id = ${id} order by id desc limit 1`;
  return row ?? null;
}

/** The attempts of message `id`, first first. */
export function listAttempts(tx: Tx, id: string): Promise<AttemptLog[]> {
  return tx<AttemptLog[]>`
    select retried, started_at as "startedAt", duration_ms as "durationMs", result, response_status as "responseStatus",
      response_headers as "responseHeaders", response_body as "responseBody", error, next_attempt_at as "nextAttemptAt",
      failure, note
    from dispatch.attempts where message_id = ${id} order by id`;
}

/** What names a message: its DLQ entry, its workflow run, the callback messages it made. */
export interface MessageRelations {
  dlqId: string | null;
  workflowRunId: string | null;
  callbacks: { id: string; origin: string; state: string }[];
}

/**
 * The relations of `message` (each through an index: dlq.message_id, the run's
 * key, source_message_id), every one in the message's project.
 */
export async function messageRelations(
  tx: Tx,
  message: { id: string; project: string; workflowRunPk: number | null },
): Promise<MessageRelations> {
  const { id, project, workflowRunPk } = message;
  const [dlq] = await tx<{ dlqId: string }[]>`select dlq_id as "dlqId" from dispatch.dlq where message_id = ${id} and project = ${project}`;
  const [run] = workflowRunPk === null
    ? []
    : await tx<{ runId: string }[]>`select run_id as "runId" from dispatch.workflow_runs where pk = ${workflowRunPk} and project = ${project}`;
  const callbacks = await tx<{ id: string; origin: string; state: string }[]>`
    select id, origin, state from dispatch.messages where source_message_id = ${id} and project = ${project} order by seq limit 20`;
  return { dlqId: dlq?.dlqId ?? null, workflowRunId: run?.runId ?? null, callbacks };
}
