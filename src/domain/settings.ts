/**
 * Settings made on first start and kept in Postgres: the generated access
 * token and the key redacted values are hashed with (the signing keys:
 * delivery/signing-keys.ts). A second start on the same database reads them
 * back; replicas starting together agree through `on conflict do nothing`.
 */
import { randomBytes } from "node:crypto";
import type { Sql, Tx } from "../db/client";
import { randomBase58 } from "./ids";

/**
 * A generated access token: base64 of a small JSON object with a `UserID`
 * field, the shape the workflow SDK's webhook feature decodes
 * (docs/workflow-protocol.md §1).
 */
export function generateAccessToken(): string {
  const credentials = { UserID: `user_${randomBase58(12)}`, Password: randomBytes(24).toString("base64url") };
  return Buffer.from(JSON.stringify(credentials)).toString("base64");
}

/** The setting `key`, made by `create` if absent (replicas starting together agree). */
export async function readOrCreate<T>(sql: Tx, key: string, create: () => T): Promise<T> {
  await sql`insert into dispatch.settings (key, value) values (${key}, ${sql.json(create() as never)}) on conflict (key) do nothing`;
  const [row] = await sql<{ value: T }[]>`select value from dispatch.settings where key = ${key}`;
  if (!row) throw new Error(`setting ${key} vanished`);
  return row.value;
}

/** The configured tokens, or the stored generated one (made now if absent). */
export async function ensureAccessTokens(sql: Sql, configured: string[]): Promise<string[]> {
  if (configured.length > 0) return configured;
  return [await readOrCreate(sql, "access_token", generateAccessToken)];
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
export async function ensureRedactionKey(sql: Sql): Promise<Buffer> {
  return Buffer.from(await readOrCreate(sql, "redaction_key", () => randomBytes(32).toString("hex")), "hex");
}

/**
 * The key the dashboard signs its session cookies with (http/dashboard/session.ts),
 * made once per database so that a session signed by one replica holds on every other.
 */
export async function ensureSessionKey(sql: Sql): Promise<Buffer> {
  return Buffer.from(await readOrCreate(sql, "dashboard_session_key", () => randomBytes(32).toString("hex")), "hex");
}
