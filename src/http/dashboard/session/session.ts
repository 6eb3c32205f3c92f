/**
 * Dashboard sessions as the dashboard uses them: the cookie holds a random
 * session id, kept server-side (domain/sessions/sessions.ts) so that signing
 * out ends it and an idle timeout ends it; its key is derived from
 * DISPATCH_SECRET (domain/secrets/stored-secrets.ts `ensureSessionKey`). Forms carry a
 * CSRF token derived from the cookie, so a form token is good for one
 * session only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Sql } from "../../../db/client";
import {
  chooseSessionProject,
  endSession,
  findSession,
  type FoundSession,
  type SessionGrant,
  type SessionTimes,
  startSession,
} from "../../../domain/sessions/sessions";

export const SESSION_COOKIE = "dispatch_session";
/** How long a sign-in lasts at most: a working day. */
export const SESSION_LIFETIME_MS = 12 * 3_600_000;

const mac = (key: Buffer, text: string) => createHmac("sha256", key).update(text).digest("base64url");

/** The sessions of one service: started at sign-in, found on every request, ended at sign-out. */
export class DashboardSessions {
  private readonly times: SessionTimes;

  constructor(
    private readonly sql: Sql,
    private readonly key: () => Promise<Buffer>,
    idleMs: number,
  ) {
    this.times = { lifetimeMs: SESSION_LIFETIME_MS, idleMs };
  }

  /** Starts a session for `grant`: the cookie's value. */
  async start(grant: SessionGrant): Promise<string> {
    return startSession(this.sql, await this.key(), grant, this.times);
  }

  /** The grant of the session in `cookie`, or null (none, signed out, idle, expired). */
  async find(cookie: string | undefined): Promise<FoundSession | null> {
    return findSession(this.sql, await this.key(), cookie, this.times);
  }

  /** Makes the session in `cookie` look at `project` (an admin session's choice). */
  async choose(cookie: string, project: string): Promise<void> {
    await chooseSessionProject(this.sql, await this.key(), cookie, project);
  }

  /** Ends the session in `cookie`. */
  async end(cookie: string | undefined): Promise<void> {
    await endSession(this.sql, await this.key(), cookie);
  }

  /** The CSRF token of the session whose cookie value is `cookie`. */
  async csrfToken(cookie: string): Promise<string> {
    return mac(await this.key(), `csrf:${cookie}`);
  }

  /** Whether `presented` is the CSRF token of the session `cookie`. */
  async checkCsrf(cookie: string, presented: string | undefined): Promise<boolean> {
    return presented !== undefined && equal(presented, await this.csrfToken(cookie));
  }
}

function equal(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}
