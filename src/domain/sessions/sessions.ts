/**
 * Dashboard sessions, kept in `dispatch.dashboard_sessions`. A session is a
 * random id the browser holds in its cookie; the table holds only the id's
 * HMAC-SHA256 under the session key (secrets/stored-secrets.ts `ensureSessionKey`, derived
 * from DISPATCH_SECRET), so neither a dump of the table nor a replica's copy
 * can make a cookie that passes. A session ends when it is signed out
 * (deleted), idle longer than the idle timeout, or past its lifetime.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Tx } from "../../db/client";

/** Who a session signed in as. */
export interface SessionGrant {
  /** The sha256 digest of the token it signed in with. */
  tokenDigest: Buffer;
  role: "full" | "readonly";
}

/** A session as found: who signed in, and the project an admin session chose (null: none yet, or it was deleted). */
export interface FoundSession extends SessionGrant {
  project: string | null;
}

/** How long sessions last. */
export interface SessionTimes {
  /** From sign-in to the end, however busy. */
  lifetimeMs: number;
  /** Without a request for this long, a session ends. */
  idleMs: number;
}

/** How often a session's last request is written down (each request would be a write per page refresh). */
const SEEN_EVERY_MS = 60_000;
/** A cookie's id: 32 random bytes, base64url. */
const ID = /^[A-Za-z0-9_-]{43}$/;

const digestOf = (key: Buffer, id: string) => createHmac("sha256", key).update(id).digest();

/** Starts a session for `grant`; returns the id for the cookie. Ended sessions are removed on the way. */
export async function startSession(sql: Tx, key: Buffer, grant: SessionGrant, times: SessionTimes): Promise<string> {
  const id = randomBytes(32).toString("base64url");
  await sql`
    delete from dispatch.dashboard_sessions
    where expires_at <= now() or last_seen_at <= now() - ${times.idleMs} * interval '1 millisecond'`;
  await sql`
    insert into dispatch.dashboard_sessions (id_digest, token_digest, role, expires_at)
    values (${digestOf(key, id)}, ${grant.tokenDigest}, ${grant.role}, now() + ${times.lifetimeMs} * interval '1 millisecond')`;
  return id;
}

/**
 * The grant of the session whose cookie holds `id`, or null when there is no
 * such session or it ended (idle or past its lifetime). Notes the request, at
 * most once a minute.
 */
export async function findSession(sql: Tx, key: Buffer, id: string | undefined, times: SessionTimes): Promise<FoundSession | null> {
  if (id === undefined || !ID.test(id)) return null;
  const digest = digestOf(key, id);
  const [row] = await sql<(FoundSession & { stale: boolean })[]>`
    select token_digest as "tokenDigest", role, project, last_seen_at <= now() - ${SEEN_EVERY_MS} * interval '1 millisecond' as stale
    from dispatch.dashboard_sessions
    where id_digest = ${digest} and expires_at > now() and last_seen_at > now() - ${times.idleMs} * interval '1 millisecond'`;
  if (!row) return null;
  if (row.stale) await sql`update dispatch.dashboard_sessions set last_seen_at = now() where id_digest = ${digest}`;
  return { tokenDigest: row.tokenDigest, role: row.role, project: row.project };
}

/** Sets the project the session whose cookie holds `id` looks at (an admin session's choice). */
export async function chooseSessionProject(sql: Tx, key: Buffer, id: string, project: string): Promise<void> {
  if (!ID.test(id)) return;
  await sql`update dispatch.dashboard_sessions set project = ${project} where id_digest = ${digestOf(key, id)}`;
}

/** Ends the session whose cookie holds `id` (nothing when there is none). */
export async function endSession(sql: Tx, key: Buffer, id: string | undefined): Promise<void> {
  if (id === undefined || !ID.test(id)) return;
  await sql`delete from dispatch.dashboard_sessions where id_digest = ${digestOf(key, id)}`;
}
