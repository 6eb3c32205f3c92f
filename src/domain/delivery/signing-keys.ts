/**
 * The signing key pair (docs/hosted-api.md §10.1): configured keys
 * (DISPATCH_CURRENT_SIGNING_KEY, DISPATCH_NEXT_SIGNING_KEY) are used as given
 * and never copied into the database; otherwise a pair is generated on first
 * start, kept sealed (secrets/secret-box.ts), and can be rotated through the
 * API. Workers cache them and are told of rotations on `KEYS_CHANNEL`.
 */
import type { Sql, Tx } from "../../db/client";
import { AppError } from "../errors";
import { newSigningKey } from "../ids";
import type { SecretBox } from "../secrets/secret-box";
import { type Kept, readOrCreate, readSecret, writeSecret } from "../secrets/stored-secrets";
import type { SigningKeys } from "./signing";

/** Where the keys in force come from: the configuration's, or the stored pair opened with `box`. */
export interface SigningKeySource {
  configured: SigningKeys | null;
  box: SecretBox;
}

/**
 * The signing keys in force, made now if none are (`created`). Configured
 * keys win; a stored copy of them, which earlier versions kept, is removed.
 */
export async function ensureSigningKeys(sql: Sql, source: SigningKeySource): Promise<Kept<SigningKeys>> {
  const { configured, box } = source;
  if (configured) {
    const [stored] = await sql<{ value: unknown }[]>`select value from dispatch.settings where key = 'signing_keys'`;
    if (stored && sameKeys(box.open<SigningKeys>("signing_keys", stored.value), configured)) {
      await sql`delete from dispatch.settings where key = 'signing_keys'`;
    }
    return { value: configured, created: false };
  }
  return readOrCreate(sql, box, "signing_keys", () => ({ current: newSigningKey(), next: newSigningKey() }));
}

const sameKeys = (a: SigningKeys, b: SigningKeys) => a.current === b.current && a.next === b.next;

/** Channel notified when the signing keys change (workers cache them). */
export const KEYS_CHANNEL = "dispatch_signing_keys";

/** Reads the signing keys in force (the stored pair changes on rotation). */
export async function readSigningKeys(sql: Tx, source: SigningKeySource): Promise<SigningKeys> {
  if (source.configured) return source.configured;
  const keys = await readSecret<SigningKeys>(sql, source.box, "signing_keys");
  return { current: keys.current, next: keys.next };
}

/**
 * Rotates the signing keys (docs/hosted-api.md §10.1): the next key becomes the
 * current one and a fresh key the next. The settings row is locked, so
 * concurrent rotations chain instead of losing one. Keys given by
 * configuration cannot be rotated here (409): the configuration would win
 * again at the next start.
 */
export async function rotateSigningKeys(tx: Tx, source: SigningKeySource): Promise<SigningKeys> {
  if (source.configured) {
    throw new AppError(
      409,
      "the signing keys are set by DISPATCH_CURRENT_SIGNING_KEY and DISPATCH_NEXT_SIGNING_KEY; " +
        "rotate them there: set the current key to the next one, and the next key to a new one",
    );
  }
  await tx`select 1 from dispatch.settings where key = 'signing_keys' for update`;
  const stored = await readSecret<SigningKeys>(tx, source.box, "signing_keys");
  const keys: SigningKeys = { current: stored.next, next: newSigningKey() };
  await writeSecret(tx, source.box, "signing_keys", keys);
  await tx`select pg_notify(${KEYS_CHANNEL}, '')`;
  return keys;
}
