/**
 * The key-encryption secret a process seals stored secrets with
 * (domain/secrets/secret-box.ts): `DISPATCH_SECRET`, or, with the embedded
 * database and no `DISPATCH_SECRET`, one made once and kept in
 * `<data folder>/secret` (mode 0600, beside the cluster's password). With a
 * configured database and no `DISPATCH_SECRET` there is none: stored secrets
 * stay as they are, and the service warns at each start.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Config } from "./config/config";
import { keepNew, readKept } from "./db/embedded/kept-file";
import { SecretBox } from "./domain/secrets/secret-box";

/** Said at each start of a service whose stored secrets are not sealed. */
export const UNSEALED_WARNING =
  "DISPATCH_SECRET is not set: the generated token, signing keys and redaction key are stored unencrypted " +
  "and dashboard sessions are keyed by the database alone; set it (e.g. openssl rand -base64 32), the same on every replica";

/** The box `config`'s process seals with; `embedded` when its database is the embedded one. */
export function secretBoxFor(config: Config, embedded: boolean): SecretBox {
  if (config.secret !== null) return SecretBox.sealingWith(config.secret);
  if (!embedded) return SecretBox.plaintext();
  const file = join(config.dataDir, "secret");
  return SecretBox.sealingWith(readKept(file) ?? keepNew(file, randomBytes(32).toString("base64url")));
}
