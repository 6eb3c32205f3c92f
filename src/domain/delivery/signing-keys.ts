/**
 * The signing key pairs (docs/hosted-api.md §10.1), one per project: a
 * delivery is signed with its project's pair, so one project's receivers
 * cannot verify (or be sent forgeries signed by) another's. The default
 * project's pair is the one that predates projects: configured keys
 * (DISPATCH_CURRENT_SIGNING_KEY, DISPATCH_NEXT_SIGNING_KEY) are used as given
 * and never copied into the database; otherwise a pair is generated on first
 * start. Every other project's pair is generated when first needed. Stored
 * pairs are sealed (secrets/secret-box.ts) and rotated through the API.
 * Workers cache them and are told of rotations on `KEYS_CHANNEL`.
 */
import type { Sql, Tx } from "../../db/client";
import { DEFAULT_PROJECT } from "../../db/vocabulary";
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
  return readOrCreate(sql, box, "signing_keys", newPair);
}

const sameKeys = (a: SigningKeys, b: SigningKeys) => a.current === b.current && a.next === b.next;
const newPair = (): SigningKeys => ({ current: newSigningKey(), next: newSigningKey() });

/** Channel notified when the signing keys change (workers cache them). */
export const KEYS_CHANNEL = "dispatch_signing_keys";

/** The settings row of a project's stored pair: the default project's is the row that predates projects. */
export const signingKeysSetting = (project: string) => (project === DEFAULT_PROJECT ? "signing_keys" : `signing_keys:${project}`);

/** Whether `project`'s keys are the configured ones (the default project's, when configured). */
const configuredFor = (source: SigningKeySource, project: string) => (project === DEFAULT_PROJECT ? source.configured : null);

/** Reads the signing keys `project` signs with (a stored pair changes on rotation; another project's is made now if it has none). */
export async function readSigningKeys(sql: Tx, source: SigningKeySource, project: string): Promise<SigningKeys> {
  const configured = configuredFor(source, project);
  if (configured) return configured;
  const setting = signingKeysSetting(project);
  const keys =
    project === DEFAULT_PROJECT
      ? await readSecret<SigningKeys>(sql, source.box, setting)
      : (await readOrCreate(sql, source.box, setting, newPair)).value;
  return { current: keys.current, next: keys.next };
}


/**
 * Rotates the signing keys (docs/hosted-api.md §10.1): the next key becomes the
 * current one and a fresh key the next. The settings row is locked, so
 * concurrent rotations chain instead of losing one. Keys given by
 * configuration cannot be rotated here (409): the configuration would win
 * again at the next start.
 */
export async function rotateSigningKeys(tx: Tx, source: SigningKeySource, project: string): Promise<SigningKeys> {
  if (configuredFor(source, project)) {
    throw new AppError(
      409,
      "the signing keys are set by DISPATCH_CURRENT_SIGNING_KEY and DISPATCH_NEXT_SIGNING_KEY; " +
        "rotate them there: set the current key to the next one, and the next key to a new one",
    );
  }
  const setting = signingKeysSetting(project);
  await readSigningKeys(tx, source, project);
  await tx`select 1 from dispatch.settings where key = ${setting} for update`;
  const stored = await readSecret<SigningKeys>(tx, source.box, setting);
  const keys: SigningKeys = { current: stored.next, next: newSigningKey() };
  await writeSecret(tx, source.box, setting, keys);
  await tx`select pg_notify(${KEYS_CHANNEL}, ${project})`;
  return keys;
}
