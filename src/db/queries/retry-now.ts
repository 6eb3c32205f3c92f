/**
 * Retry now: a message waiting out its retry backoff — RETRY, on the work
 * list (so no claim holds it: claiming takes `due_at` off) with its next
 * attempt due later — is due now, and the workers are woken (work-list.ts).
 * Any other message is left as it is: one being attempted, finished, held by
 * flow control, or already due.
 */
import type { Tx } from "../client";
import { notifyDue } from "./work-list";

/** Makes `messageId` due now if it waits on a retry backoff; its new due time, or null when it did not. */
export async function makeRetryDueNow(tx: Tx, project: string, messageId: string): Promise<Date | null> {
  const [row] = await tx<{ dueAt: Date }[]>`
    update dispatch.messages set due_at = now(), next_delivery_at = now()
    where id = ${messageId} and project = ${project} and state = 'RETRY' and due_at > now()
    returning due_at as "dueAt"`;
  if (row) await notifyDue(tx);
  return row?.dueAt ?? null;
}
