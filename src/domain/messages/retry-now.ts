/**
 * Retry now: a message waiting out its retry backoff is attempted at once
 * instead of at its next attempt time (a Dispatch extension of the API, and
 * the dashboard's "Retry now"). Its retry budget is unchanged: the attempt is
 * the one the backoff was waiting for.
 */
import type { Tx } from "../../db/client";
import { makeRetryDueNow } from "../../db/queries/retry-now";
import type { MessageState } from "../../db/vocabulary";
import { findOwnMessage } from "./message";

/** What retry now did. */
export type RetryNowResult =
  | { kind: "done"; messageId: string; dueAt: Date }
  | { kind: "not-found" }
  /** The message is not waiting on a backoff: `why` says what it is doing instead. */
  | { kind: "not-in-backoff"; state: MessageState; why: string };

/** The fields that tell whether a message waits out a retry backoff. */
export interface BackoffFields {
  state: string;
  dueAt: Date | null;
}

/**
 * Whether the message waits out a retry backoff at `now`: RETRY, and on the
 * work list (no claim holds it) due later — the transition's own guard
 * (db/queries/retry-now.ts).
 */
export const waitsOnBackoff = (message: BackoffFields, now: number) =>
  message.state === "RETRY" && message.dueAt !== null && message.dueAt.getTime() > now;

/** Makes the message `id` of `project` due now if it waits out a retry backoff (another project's is not found). */
export async function retryNow(tx: Tx, project: string, id: string): Promise<RetryNowResult> {
  const dueAt = await makeRetryDueNow(tx, project, id);
  if (dueAt !== null) return { kind: "done", messageId: id, dueAt };
  const message = await findOwnMessage(tx, project, id);
  if (message === null) return { kind: "not-found" };
  return { kind: "not-in-backoff", state: message.state, why: notInBackoff(message) };
}

function notInBackoff(message: BackoffFields & { flowParked: boolean; destinationParked: boolean }): string {
  if (message.state !== "RETRY") return `it is ${message.state}, not waiting to be retried`;
  if (message.flowParked) return "it waits for its flow-control key, not for a backoff";
  if (message.destinationParked) return "it waits in its destination's line (an open circuit, or its share of the slots), not for a backoff";
  if (message.dueAt === null) return "an attempt of it is under way";
  return "its retry is due already";
}
