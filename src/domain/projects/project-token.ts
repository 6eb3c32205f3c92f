/**
 * The token `dispatch project create` prints for a project's `.env`, and
 * `dispatch env --project` prints again: a full token of the project, stored
 * like any other (so `dispatch token list` shows it and `revoke` ends it) and
 * kept sealed as the setting `access_token:<project>` so that it can be
 * shown again. One that was revoked is replaced by a new one.
 */
import type { Transaction } from "../../db/client";
import { createAccessToken, tokenDigest } from "../access-tokens/access-tokens";
import { AppError } from "../errors";
import type { SecretBox } from "../secrets/secret-box";

/** The project's environment token, made now if it has none in force. */
export async function projectToken(tx: Transaction, box: SecretBox, project: string): Promise<string> {
  const setting = `access_token:${project}`;
  const [row] = await tx<{ value: unknown }[]>`select value from dispatch.settings where key = ${setting} for update`;
  if (row) {
    const token = box.open<string>(setting, row.value);
    const [inForce] = await tx`select 1 from dispatch.access_tokens where digest = ${tokenDigest(token)}`;
    if (inForce) return token;
  }
  const { token } = await createNamed(tx, project);
  await tx`
    insert into dispatch.settings (key, value) values (${setting}, ${tx.json(box.seal(setting, token) as never)})
    on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at`;
  return token;
}

/** A full token of `project` named `<project>-env`, or a generated name when an operator took that one. */
async function createNamed(tx: Transaction, project: string) {
  try {
    return await createAccessToken(tx, { name: `${project}-env`, readOnly: false, project });
  } catch (error) {
    if (!(error instanceof AppError && error.status === 409)) throw error;
    return createAccessToken(tx, { name: null, readOnly: false, project });
  }
}
