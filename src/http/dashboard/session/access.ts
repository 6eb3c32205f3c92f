/**
 * Which tokens may sign in to the dashboard, and with what role: the tokens
 * the API accepts at that moment (configured, generated or created with
 * `dispatch token create`), full or read-only, compared as `requireToken`
 * compares them (`accessOf`). A session holds only the token's digest, so
 * every request asks `roleOfDigest` again: a token removed from the
 * configuration, or revoked, ends its sessions. A sign-in, and a session's
 * requests, are uses of its token, noted as the API notes them.
 */
import { tokenDigest } from "../../../domain/access-tokens/access-tokens";
import { type Access, accessOf, type TokenSet } from "../../../domain/access-tokens/token-set";

/** What a token may do in the dashboard: everything, or look. */
export type Role = Access;

/** The token check the dashboard relies on. */
export interface TokenAccess {
  /** The role of a presented token, or null when the API does not accept it. */
  roleOf(token: string): Role | null;
  /** The role of a token given by its digest (a session's), or null when no accepted token has it. */
  roleOfDigest(digest: Buffer): Role | null;
}

export { tokenDigest };

/** Token access over the tokens the API accepts. */
export function tokenAccess(tokens: TokenSet): TokenAccess {
  const roleOfDigest = (digest: Buffer): Role | null => {
    const role = digest.length === 32 ? accessOf(tokens.current(), digest) : null;
    if (role !== null) tokens.noteUse?.(digest);
    return role;
  };
  return { roleOf: (token) => roleOfDigest(tokenDigest(token)), roleOfDigest };
}
