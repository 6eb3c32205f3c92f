/**
 * Dashboard sessions: a signed cookie instead of a server-side table. The
 * cookie holds the token's SHA-256 digest (never the token), the role it had
 * at sign-in and when the session ends, signed with HMAC-SHA256 under a key
 * kept in the database (domain/settings.ts `ensureSessionKey`). Forms carry a
 * CSRF token derived from the cookie, so a token is good for one session only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Role } from "./access";

/** A verified session. */
export interface Session {
  digest: Buffer;
  role: Role;
  /** Unix ms. */
  expiresAt: number;
}

export const SESSION_COOKIE = "dispatch_session";
/** How long a sign-in lasts: a working day. */
export const SESSION_LIFETIME_MS = 12 * 3_600_000;

const mac = (key: Buffer, text: string) => createHmac("sha256", key).update(text).digest("base64url");

/** The cookie value of `session`: `<digest>.<role>.<expiresAt>.<signature>`. */
export function signSession(key: Buffer, session: Session): string {
  const payload = `${session.digest.toString("base64url")}.${session.role}.${session.expiresAt}`;
  return `${payload}.${mac(key, payload)}`;
}

/** The session a cookie value holds, or null when it is malformed, forged or expired. */
export function readSession(key: Buffer, value: string | undefined, now: number): Session | null {
  if (value === undefined || value.length > 200) return null;
  const match = /^([A-Za-z0-9_-]{43})\.(full|readonly)\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!match) return null;
  const [, digest, role, expiresAt, signature] = match as unknown as [string, string, Role, string, string];
  if (!equal(signature, mac(key, `${digest}.${role}.${expiresAt}`))) return null;
  if (Number(expiresAt) <= now) return null;
  return { digest: Buffer.from(digest, "base64url"), role, expiresAt: Number(expiresAt) };
}

/** The CSRF token of the session whose cookie value is `cookie`. */
export const csrfToken = (key: Buffer, cookie: string) => mac(key, `csrf:${cookie}`);

/** Whether `presented` is the CSRF token of the session `cookie`. */
export function checkCsrf(key: Buffer, cookie: string, presented: string | undefined): boolean {
  return presented !== undefined && equal(presented, csrfToken(key, cookie));
}

function equal(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}
