/**
 * Deduplication windows (docs/hosted-api.md §3.3). A key lives in
 * `dispatch.deduplication_keys` until it expires; its primary key (the
 * project and the key: projects deduplicate apart) makes concurrent identical
 * publishes on any replica race on one row, so exactly one of them creates a
 * message and the others get its id.
 */
import { createHash } from "node:crypto";
import { byProject } from "../../db/citus/by-project";
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
  const held = new Map<string, string>();
  for (const [project, ofProject] of byProject(sorted, (claim) => claim.project)) {
    const keys = ofProject.map((claim) => claim.key);
    // An expired row is taken over (deleted, then inserted again); a live one makes the insert a no-op. A racing
    // uncommitted insert of the same key blocks here until it commits or aborts. Two statements, not an upsert
    // whose condition reads the clock: Citus takes only immutable functions in an ON CONFLICT clause.
    await tx`delete from dispatch.deduplication_keys where project = ${project} and key = any(${keys}::text[]) and expires_at <= now()`;
    const inserted = await tx<{ key: string }[]>`
      insert into dispatch.deduplication_keys (project, key, message_id, expires_at)
      select ${project}, key, message_id, now() + ${windowMs} * interval '1 millisecond'
      from unnest(${keys}::text[], ${ofProject.map((claim) => claim.messageId)}::text[]) as c(key, message_id)
      on conflict (project, key) do nothing
      returning key`;
    const won = new Set(inserted.map((row) => row.key));
    const lost = keys.filter((key) => !won.has(key));
    if (lost.length === 0) continue;
    const holders = await tx<{ key: string; messageId: string }[]>`
      select key, message_id as "messageId" from dispatch.deduplication_keys where project = ${project} and key = any(${lost}::text[])`;
    for (const row of holders) held.set(projectKey(project, row.key), row.messageId);
  }
  return held;
}

/** Deletes expired windows; run periodically by the maintenance task. */
export async function purgeExpiredDeduplicationKeys(tx: Tx): Promise<number> {
  const result = await tx`delete from dispatch.deduplication_keys where expires_at < now()`;
  return result.count;
}
