/**
 * The link from a failed message to its DLQ retry (domain/dlq/retry-links.ts
 * reads it): `retried_as` names the retry, `retried_at` is the retry's
 * `created_at`. It changes no state and nothing on the work list
 * (work-list.ts): the failed message is finished, and only its link is set.
 */
import type { Tx } from "../client";

/** Records that each `retry` was published by retrying the DLQ entry of `original` (both `project`'s). */
export async function linkRetries(tx: Tx, project: string, links: { original: string; retry: string }[]): Promise<void> {
  if (links.length === 0) return;
  await tx`
    update dispatch.messages o set retried_as = l.retry, retried_at = r.created_at
    from unnest(${links.map((l) => l.original)}::text[], ${links.map((l) => l.retry)}::text[]) as l(original, retry)
      join dispatch.messages r on r.project = ${project} and r.id = l.retry
    where o.project = ${project} and o.id = l.original`;
}
