/**
 * Deduplication windows (docs/hosted-api.md §3.3). A key lives in
 * `dispatch.deduplication_keys` until it expires; its primary key (the
 * project and the key: projects deduplicate apart) makes concurrent identical
 * publishes on any replica race on one row, so exactly one of them creates a
 * message and the others get its id.
 */
import { createHash } from "node:crypto";
import type { Tx } from "../../db/client";

/** What identifies a message for content-based deduplication. */
export interface DeduplicationInput {
  url: string;
  method: string;
  contentType: string | null;
  headers: Record<string, string>;
  body: Buffer;
}

const sha256 = (parts: (string | Buffer)[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part).update("\u0000");
  return hash.digest("base64url");
};

/**
 * The key of a message, scoped to its delivery URL so that a URL-group
 * publish deduplicates per endpoint; null when the publish asked for none.
 */
export function deduplicationKey(
  input: DeduplicationInput,
  deduplicationId: string | null,
  contentBased: boolean,
): string | null {
  if (deduplicationId !== null) return `id:${sha256([input.url, deduplicationId])}`;
  if (!contentBased) return null;
  const headers = Object.entries(input.headers)
    .map(([name, value]) => `${name.toLowerCase()}:${value}`)
    .sort();
  return `content:${sha256([input.url, input.method, input.contentType ?? "", ...headers, input.body])}`;
}

/** A key of a project, and the message that would own it. */
export interface DeduplicationClaim {
  project: string;
  key: string;
  messageId: string;
}

/** One string for a project's key, as the claims' maps hold it. */
export const projectKey = (project: string, key: string) => `${project}\u0000${key}`;

/**
 * Claims keys (each with the id of the message that would own it) for the
 * window. Returns, for every key already held by a live window, the id of the
 * message that holds it, by `projectKey`. Must run in the transaction that
 * inserts the messages.
 */
export async function claimDeduplicationKeys(tx: Tx, claims: DeduplicationClaim[], windowMs: number): Promise<Map<string, string>> {
  if (claims.length === 0) return new Map();
  // Claiming in (project, key) order keeps two overlapping batches from deadlocking.
  const order = (claim: DeduplicationClaim) => projectKey(claim.project, claim.key);
  const sorted = [...claims].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  const projects = sorted.map((claim) => claim.project);
  const keys = sorted.map((claim) => claim.key);
  // An expired row is taken over; a live one makes the insert a no-op. A racing
  // uncommitted insert of the same key blocks here until it commits or aborts.
  const won = await tx<{ project: string; key: string }[]>`
    insert into dispatch.deduplication_keys (project, key, message_id, expires_at)
    select project, key, message_id, now() + ${windowMs} * interval '1 millisecond'
    from unnest(${projects}::text[], ${keys}::text[], ${sorted.map((claim) => claim.messageId)}::text[]) as c(project, key, message_id)
    on conflict (project, key) do update set message_id = excluded.message_id, expires_at = excluded.expires_at
      where dispatch.deduplication_keys.expires_at <= now()
    returning project, key`;
  const wonKeys = new Set(won.map((row) => projectKey(row.project, row.key)));
  const lost = sorted.filter((claim) => !wonKeys.has(order(claim)));
  if (lost.length === 0) return new Map();
  const holders = await tx<{ project: string; key: string; messageId: string }[]>`
    select d.project, d.key, d.message_id as "messageId"
    from dispatch.deduplication_keys d
      join unnest(${lost.map((claim) => claim.project)}::text[], ${lost.map((claim) => claim.key)}::text[]) as l(project, key)
        on d.project = l.project and d.key = l.key`;
  return new Map(holders.map((row) => [projectKey(row.project, row.key), row.messageId]));
}

/** Deletes expired windows; run periodically by the maintenance task. */
export async function purgeExpiredDeduplicationKeys(tx: Tx): Promise<number> {
  const result = await tx`delete from dispatch.deduplication_keys where expires_at < now()`;
  return result.count;
}
