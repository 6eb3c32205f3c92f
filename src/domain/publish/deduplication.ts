/**
 * Deduplication windows (docs/hosted-api.md §3.3). A key lives in
 * `dispatch.deduplication_keys` until it expires; its primary key makes
 * concurrent identical publishes on any replica race on one row, so exactly
 * one of them creates a message and the others get its id.
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

/**
 * Claims `keys` (each with the id of the message that would own it) for the
 * window. Returns, for every key already held by a live window, the id of the
 * message that holds it. Must run in the transaction that inserts the messages.
 */
export async function claimDeduplicationKeys(
  tx: Tx,
  claims: { key: string; messageId: string }[],
  windowMs: number,
): Promise<Map<string, string>> {
  if (claims.length === 0) return new Map();
  // Claiming in key order keeps two overlapping batches from deadlocking.
  const sorted = [...claims].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const keys = sorted.map((claim) => claim.key);
  // An expired row is taken over; a live one makes the insert a no-op. A racing
  // uncommitted insert of the same key blocks here until it commits or aborts.
  const won = await tx<{ key: string }[]>`
    insert into dispatch.deduplication_keys (key, message_id, expires_at)
    select key, message_id, now() + ${windowMs} * interval '1 millisecond'
    from unnest(${keys}::text[], ${sorted.map((claim) => claim.messageId)}::text[]) as c(key, message_id)
    on conflict (key) do update set message_id = excluded.message_id, expires_at = excluded.expires_at
      where dispatch.deduplication_keys.expires_at <= now()
    returning key`;
  const wonKeys = new Set(won.map((row) => row.key));
  const lost = keys.filter((key) => !wonKeys.has(key));
  if (lost.length === 0) return new Map();
  const holders = await tx<{ key: string; messageId: string }[]>`
    select key, message_id as "messageId" from dispatch.deduplication_keys where key = any(${lost}::text[])`;
  return new Map(holders.map((row) => [row.key, row.messageId]));
}

/** Deletes expired windows; run periodically by the maintenance task. */
export async function purgeExpiredDeduplicationKeys(tx: Tx): Promise<number> {
  const result = await tx`delete from dispatch.deduplication_keys where expires_at < now()`;
  return result.count;
}
