/**
 * Access tokens operators create, list and revoke (`dispatch token create`,
 * `list`, `revoke`), accepted beside the configured or generated ones
 * (secrets/stored-secrets.ts). Only a token's sha256 digest is stored: the token is
 * returned once, by `createAccessToken`, and can never be read back. Every
 * change sends a NOTIFY on `ACCESS_TOKENS_CHANNEL` in its transaction, so the
 * API processes' token sets (token-set.ts) take it up at once.
 */
import { hash } from "node:crypto";
import type { Transaction, Tx } from "../../db/client";
import { AppError, badRequest } from "../errors";
import { randomBase58 } from "../ids";
import { generateAccessToken } from "../secrets/stored-secrets";

/** Channel notified when a stored access token is created or revoked. */
export const ACCESS_TOKENS_CHANNEL = "dispatch_access_tokens";

/** A stored access token as operators see it: never the token. */
export interface AccessTokenEntry {
  name: string;
  readOnly: boolean;
  /** The project whose data it sees and changes. */
  project: string;
  createdAt: Date;
  /** When it was last used (token-uses.ts, to the minute); null when never. */
  lastUsedAt: Date | null;
}

/** What an API process keeps of a stored token to check requests against. */
export interface AccessTokenDigest {
  digest: Buffer;
  readOnly: boolean;
  /** The project whose data the token sees and changes. */
  project: string;
  /** The `UserID` inside the token (`tokenUserId`): its workflow webhooks' user id. */
  userId: string | null;
}

const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** The sha256 digest tokens are stored and compared as (hashing also evens out their lengths). */
export function tokenDigest(token: string): Buffer {
  return hash("sha256", token, "buffer");
}

/**
 * The `UserID` inside a token minted as base64 JSON (secrets/stored-secrets.ts
 * `generateAccessToken`, and the hosted service's tokens), if it is one: the
 * workflow SDK reads it to build webhook URLs (docs/workflow-protocol.md §7.5).
 */
export function tokenUserId(token: string): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64").toString("utf8"));
    return typeof parsed?.UserID === "string" ? parsed.UserID : null;
  } catch {
    return null;
  }
}

/** `name` when it is a valid token name, else a 400 saying what a name may hold. */
export function checkTokenName(name: string): string {
  if (!NAME.test(name)) throw badRequest(`invalid token name ${JSON.stringify(name)}: use 1-100 letters, digits, ".", "_" or "-"`);
  return name;
}

/**
 * Creates a token of `project` named `name` (or a generated name) and
 * returns it with its name: the only time the token is seen. A name already
 * taken is a 409, a project that does not exist a 404.
 */
export async function createAccessToken(
  tx: Transaction,
  request: { name: string | null; readOnly: boolean; project: string },
): Promise<{ name: string; token: string }> {
  const name = request.name === null ? `token-${randomBase58(8)}` : checkTokenName(request.name);
  const token = generateAccessToken();
  const [created] = await tx`
    insert into dispatch.access_tokens (name, project, digest, read_only, user_id)
    select ${name}, p.name, ${tokenDigest(token)}, ${request.readOnly}, ${tokenUserId(token)}
    from dispatch.projects p where p.name = ${request.project}
    on conflict (name) do nothing returning name`;
  if (!created) {
    const [project] = await tx`select 1 from dispatch.projects where name = ${request.project}`;
    if (!project) throw new AppError(404, `no project is named ${JSON.stringify(request.project)} (dispatch project list shows them)`);
    throw new AppError(409, `an access token named ${name} already exists`);
  }
  await tx`select pg_notify(${ACCESS_TOKENS_CHANNEL}, '')`;
  return { name, token };
}

/** The stored tokens, oldest first, each with its last use. */
export async function listAccessTokens(sql: Tx): Promise<AccessTokenEntry[]> {
  return sql<AccessTokenEntry[]>`
    select t.name, t.read_only as "readOnly", t.project, t.created_at as "createdAt", u.last_used_at as "lastUsedAt"
    from dispatch.access_tokens t left join dispatch.access_token_uses u on u.digest = t.digest
    order by t.created_at, t.name`;
}

/** Revokes (deletes) the token named `name`, and its last use; a 404 when there is none (a name no token can have included). */
export async function revokeAccessToken(tx: Transaction, name: string): Promise<void> {
  const [revoked] = NAME.test(name) ? await tx<{ digest: Buffer }[]>`delete from dispatch.access_tokens where name = ${name} returning digest` : [];
  if (!revoked) throw new AppError(404, `no stored access token is named ${JSON.stringify(name)} (see dispatch token list)`);
  await tx`delete from dispatch.access_token_uses where digest = ${revoked.digest}`;
  await tx`select pg_notify(${ACCESS_TOKENS_CHANNEL}, '')`;
}

/** Whether the stored token with `digest` is read-only, and its project; null when no stored token has it. */
export async function findAccessToken(sql: Tx, digest: Buffer): Promise<{ readOnly: boolean; project: string } | null> {
  const [row] = await sql<{ readOnly: boolean; project: string }[]>`
    select read_only as "readOnly", project from dispatch.access_tokens where digest = ${digest}`;
  return row ?? null;
}

/** The digests (and user ids) of every stored token, for the API's token sets. */
export async function readAccessTokenDigests(sql: Tx): Promise<AccessTokenDigest[]> {
  return sql<AccessTokenDigest[]>`select digest, read_only as "readOnly", project, user_id as "userId" from dispatch.access_tokens`;
}
