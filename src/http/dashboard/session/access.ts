/**
 * Which tokens may sign in to the dashboard, and with what role: the tokens
 * the API accepts at that moment (configured, generated or created with
 * `dispatch token create`), full or read-only, compared as `requireToken`
 * compares them (`grantOf`). A session holds only the token's digest, so
 * every request asks `grantOfDigest` again: a token removed from the
 * configuration, or revoked, ends its sessions. A sign-in, and a session's
 * requests, are uses of its token, noted as the API notes them.
 * DISPATCH_ADMIN_TOKEN signs in too, as an admin: a full session that
 * chooses which project it looks at (guard.ts, project-choice.ts).
 */
import { timingSafeEqual } from "node:crypto";
import { tokenDigest } from "../../../domain/access-tokens/access-tokens";
import { type Access, type Grant, grantOf, type TokenSet } from "../../../domain/access-tokens/token-set";
import { DEFAULT_PROJECT } from "../../../db/vocabulary";

/** What a token may do in the dashboard: everything, or look. */
export type Role = Access;

/** What a token grants in the dashboard: a project's token its project; the admin token every project (`admin`, the default one first). */
export interface DashboardGrant extends Grant {
  readonly admin: boolean;
}

/** The token check the dashboard relies on. */
export interface TokenAccess {
  /** What a presented token grants (its role, its project), or null when neither the API nor the admin API accepts it. */
  grantOf(token: string): DashboardGrant | null;
  /** What a token given by its digest (a session's) grants, or null when no accepted token has it. */
  grantOfDigest(digest: Buffer): DashboardGrant | null;
}

const ADMIN: DashboardGrant = { access: "full", project: DEFAULT_PROJECT, admin: true };

export { tokenDigest };

/** Token access over the tokens the API accepts, and the admin token (none when null). */
export function tokenAccess(tokens: TokenSet, adminToken: string | null): TokenAccess {
  const admin = adminToken === null ? null : tokenDigest(adminToken);
  const grantOfDigest = (digest: Buffer): DashboardGrant | null => {
    if (digest.length !== 32) return null;
    if (admin !== null && timingSafeEqual(digest, admin)) return ADMIN;
    const grant = grantOf(tokens.current(), digest);
    if (grant === null) return null;
    tokens.noteUse?.(digest);
    return { ...grant, admin: false };
  };
  return { grantOf: (token) => grantOfDigest(tokenDigest(token)), grantOfDigest };
}
