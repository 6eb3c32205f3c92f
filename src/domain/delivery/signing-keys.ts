/**
 * The signing key pair (docs/hosted-api.md §10.1): configured keys are stored so
 * every replica signs with them, otherwise a pair is generated on first start;
 * generated keys can be rotated through the API. Workers cache them and are
 * told of changes on `KEYS_CHANNEL`.
 */
import type { Sql, Tx } from "../../db/client";
import { AppError } from "../errors";
import { newSigningKey } from "../ids";
import { readOrCreate } from "../settings";
import type { SigningKeys } from "./signing";

/**
 * The signing keys in force. Configured keys are authoritative and are stored
 * so every replica signs with them; otherwise a pair is generated once.
 */
export async function ensureSigningKeys(sql: Sql, configured: SigningKeys | null): Promise<SigningKeys> {
  if (configured) {
    await sql`
      insert into dispatch.settings (key, value) values ('signing_keys', ${sql.json({ ...configured })})
      on conflict (key) do update set value = excluded.value, updated_at = now()
      where dispatch.settings.value is distinct from excluded.value`;
    await sql`select pg_notify(${KEYS_CHANNEL}, '')`;
    return configured;
  }
  return readOrCreate(sql, "signing_keys", () => ({ current: newSigningKey(), next: newSigningKey() }));
}

/** Channel notified when the signing keys change (workers cache them). */
export const KEYS_CHANNEL = "dispatch_signing_keys";

/** Reads the signing keys in force (they change on rotation). */
export async function readSigningKeys(sql: Tx): Promise<SigningKeys> {
  const [row] = await sql<{ value: SigningKeys }[]>`select value from dispatch.settings where key = 'signing_keys'`;
  if (!row) throw new Error("signing keys are missing; run migrations and start the service once");
  return row.value;
}

/**
 * Rotates the signing keys (docs/hosted-api.md §10.1): the next key becomes the
 * current one and a fresh key the next. The settings row is locked, so
 * concurrent rotations chain instead of losing one. Keys given by
 * configuration cannot be rotated here (409): the configuration would win
 * again at the next start.
 */
export async function rotateSigningKeys(tx: Tx, configured: boolean): Promise<SigningKeys> {
  if (configured) {
    throw new AppError(
      409,
      "the signing keys are set by DISPATCH_CURRENT_SIGNING_KEY and DISPATCH_NEXT_SIGNING_KEY; " +
        "rotate them there: set the current key to the next one, and the next key to a new one",
    );
  }
  const [row] = await tx<{ value: SigningKeys }[]>`
    select value from dispatch.settings where key = 'signing_keys' for update`;
  if (!row) throw new Error("signing keys are missing; run migrations and start the service once");
  const keys: SigningKeys = { current: row.value.next, next: newSigningKey() };
  await tx`update dispatch.settings set value = ${tx.json({ ...keys })}, updated_at = now() where key = 'signing_keys'`;
  await tx`select pg_notify(${KEYS_CHANNEL}, '')`;
  return keys;
}
