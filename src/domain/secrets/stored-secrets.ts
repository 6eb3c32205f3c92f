/**
 * Secrets made on first start and kept in Postgres (rows of
 * `dispatch.settings`): the generated access token, the key redacted values
 * are hashed with, the dashboard sessions' key, and the signing keys
 * (delivery/signing-keys.ts reads and rotates them here). They are sealed by
 * the service's SecretBox (secret-box.ts). A second start on the same
 * database reads them back; replicas starting together agree through
 * `on conflict do nothing`.
 */
import { randomBytes } from "node:crypto";
import type { Sql, Tx } from "../../db/client";
import { randomBase58 } from "../ids";
import { isSealed, type SecretBox } from "./secret-box";

/** The settings that hold secrets: sealed whenever the service has a key-encryption secret (and each project's `signing_keys:<project>` and `access_token:<project>`). */
const SECRET_SETTINGS = ["access_token", "signing_keys", "redaction_key", "dashboard_session_key"] as const;

/** A setting read or made, and whether this call made it. */
export interface Kept<T> {
  value: T;
  created: boolean;
}

/**
 * A generated access token: base64 of a small JSON object with a `UserID`
 * field, the shape the workflow SDK's webhook feature decodes
 * (docs/workflow-protocol.md §1).
 */
export function generateAccessToken(): string {
  const credentials = { UserID: `user_${randomBase58(12)}`, Password: randomBytes(24).toString("base64url") };
  return Buffer.from(JSON.stringify(credentials)).toString("base64");
}

/** The secret setting `key`, made by `create` (and sealed) if absent; replicas starting together agree. */
export async function readOrCreate<T>(sql: Tx, box: SecretBox, key: string, create: () => T): Promise<Kept<T>> {
  const made = await sql`
    insert into dispatch.settings (key, value) values (${key}, ${sql.json(box.seal(key, create()) as never)})
    on conflict (key) do nothing returning key`;
  return { value: await readSecret<T>(sql, box, key), created: made.length > 0 };
}

/** The secret setting `key`, opened; an error when it is missing. */
export async function readSecret<T>(sql: Tx, box: SecretBox, key: string): Promise<T> {
  const [row] = await sql<{ value: unknown }[]>`select value from dispatch.settings where key = ${key}`;
  if (!row) throw new Error(`setting ${key} is missing; run migrations and start the service once`);
  return box.open<T>(key, row.value);
}

/** Stores `value` as the secret setting `key`, sealed. */
export async function writeSecret(sql: Tx, box: SecretBox, key: string, value: unknown): Promise<void> {
  await sql`update dispatch.settings set value = ${sql.json(box.seal(key, value) as never)}, updated_at = now() where key = ${key}`;
}

/**
 * Seals the secret settings an earlier version (or a start without a
 * secret) kept in plaintext, and removes the stored session key a secret
 * makes needless. Returns how many rows it sealed. Each row is changed only
 * if it is still the plaintext read, so replicas starting together agree.
 */
export async function sealStoredSecrets(sql: Sql, box: SecretBox): Promise<number> {
  if (!box.seals) return 0;
  await sql`delete from dispatch.settings where key = 'dashboard_session_key'`;
  const rows = await sql<{ key: string; value: unknown }[]>`
    select key, value from dispatch.settings where key in ${sql(SECRET_SETTINGS)} or key like 'signing\_keys:%' or key like 'access\_token:%'`;
  let sealed = 0;
  for (const { key, value } of rows) {
    if (isSealed(value)) continue;
    const changed = await sql`
      update dispatch.settings set value = ${sql.json(box.seal(key, value) as never)}, updated_at = now()
      where key = ${key} and value = ${sql.json(value as never)} returning key`;
    sealed += changed.length;
  }
  return sealed;
}

/** The configured tokens, or the stored generated one (made now if absent: `created`). */
export async function ensureAccessTokens(sql: Sql, box: SecretBox, configured: string[]): Promise<Kept<string[]>> {
  if (configured.length > 0) return { value: configured, created: false };
  const { value, created } = await readOrCreate(sql, box, "access_token", generateAccessToken);
  return { value: [value], created };
}

/** Whether the generated access token was made (it is in force while no DISPATCH_TOKEN is set). */
export async function hasGeneratedAccessToken(sql: Tx): Promise<boolean> {
  const [row] = await sql`select 1 from dispatch.settings where key = 'access_token'`;
  return row !== undefined;
}

/**
 * The key redacted values are hashed with (messages/redaction.ts), made once per
 * database so that every replica shows the same hash for the same value.
 */
export async function ensureRedactionKey(sql: Sql, box: SecretBox): Promise<Buffer> {
  return Buffer.from((await readOrCreate(sql, box, "redaction_key", () => randomBytes(32).toString("hex"))).value, "hex");
}

/**
 * The key dashboard sessions are bound to: derived
 * from the key-encryption secret, so that a copy of the database cannot make
 * one; without a secret, a key made once per database (so that a session
 * made by one replica holds on every other).
 */
export async function ensureSessionKey(sql: Sql, box: SecretBox): Promise<Buffer> {
  if (box.sessionKey !== null) return box.sessionKey;
  return Buffer.from((await readOrCreate(sql, box, "dashboard_session_key", () => randomBytes(32).toString("hex"))).value, "hex");
}
