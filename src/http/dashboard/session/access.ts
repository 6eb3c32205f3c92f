/**
 * Which tokens may sign in to the dashboard, and with what role: the tokens
 * the API accepts at that moment (configured, generated or created with
 * `dispatch token create`), full or read-only, compared as `requireToken`
 * compares them (`grantOf`). A session holds only the token's digest, so
 * every request asks `grantOfDigest` again: a token removed from the
 * configuration, or revoked, ends its sessions. A sign-in, and a session's
 * requests, are uses of its token, noted as the API notes them.
 */
import { tokenDigest } from "../../../domain/access-tokens/access-tokens";
import { type Access, type Grant, grantOf, type TokenSet } from "../../../domain/access-tokens/token-set";

/** What a token may do in the dashboard: everything, or look. */
export type Role = Access;

/** The token check the dashboard relies on. */
export interface TokenAccess {
  /** What a presented token grants (its role, its project), or null when the API does not accept it. */
  grantOf(token: string): Grant | null;
  /** What a token given by its digest (a session's) grants, or null when no accepted token has it. */
  grantOfDigest(digest: Buffer): Grant | null;
}

export { tokenDigest };

/** Token access over the tokens the API accepts. */
export function tokenAccess(tokens: TokenSet): TokenAccess {
  const grantOfDigest = (digest: Buffer): Grant | null => {
    const grant = digest.length === 32 ? grantOf(tokens.current(), digest) : null;
    if (grant !== null) tokens.noteUse?.(digest);
    return grant;
  };
  return { grantOf: (token) => grantOfDigest(tokenDigest(token)), grantOfDigest };
}
