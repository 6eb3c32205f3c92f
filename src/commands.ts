/**
 * The operator's commands besides `start`, each on the configured database
 * (the embedded one when DATABASE_URL is unset), migrated first:
 *
 * - `dispatch migrate`: applies the migrations and exits.
 * - `dispatch token`: prints the access tokens in force (DISPATCH_TOKEN, or the
 *   one generated on first start).
 * - `dispatch keys`: prints the signing keys; `dispatch keys rotate` rotates
 *   generated keys (configured ones are rotated in the configuration).
 */
import type { Config } from "./config/config";
import { ensureSigningKeys, rotateSigningKeys } from "./domain/delivery/signing-keys";
import { AppError } from "./domain/errors";
import { ensureAccessTokens } from "./domain/settings";
import type { Log } from "./observability/log";
import { openDatabase } from "./service";

/** A command's outcome: what to print and the exit code. */
export interface CommandResult {
  code: number;
  output: string;
}

export type Command = "migrate" | "token" | "keys" | "keys rotate";

/** Runs `command` against `config`'s database. */
export async function runCommand(command: Command, config: Config, log: Log): Promise<CommandResult> {
  const database = await openDatabase(config, log);
  try {
    const { sql } = database;
    if (command === "migrate") return { code: 0, output: `migrations applied (${database.embedded ? "embedded database" : "DATABASE_URL"})` };
    if (command === "token") return { code: 0, output: (await ensureAccessTokens(sql, config.tokens)).join("\n") };
    const configured = config.currentSigningKey && config.nextSigningKey
      ? { current: config.currentSigningKey, next: config.nextSigningKey }
      : null;
    let keys = await ensureSigningKeys(sql, configured);
    if (command === "keys rotate") keys = await sql.begin((tx) => rotateSigningKeys(tx, configured !== null));
    return { code: 0, output: `current: ${keys.current}\nnext:    ${keys.next}` };
  } catch (error) {
    if (error instanceof AppError) return { code: 1, output: error.message };
    throw error;
  } finally {
    await database.close();
  }
}
