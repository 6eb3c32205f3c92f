/**
 * The operator's commands besides `start`, each on the configured database
 * (the embedded one when DATABASE_URL is unset), migrated first:
 *
 * - `dispatch migrate`: applies the migrations and exits.
 * - `dispatch token`: prints the configured access tokens (DISPATCH_TOKEN), or
 *   the one generated on first start.
 * - `dispatch token create|list|revoke`: tokens made from the command line
 *   (token-commands.ts).
 * - `dispatch keys`: prints the signing keys; `dispatch keys rotate` rotates
 *   generated keys (configured ones are rotated in the configuration).
 * - `dispatch env`: prints the variables the official SDKs read (banner.ts).
 * - `dispatch project create|list|delete`, `dispatch env --project`: the
 *   projects one Dispatch serves (project-commands.ts).
 */
import { configuredBaseUrl, sdkEnvironment } from "./banner";
import { configuredKeys, type Config } from "./config/config";
import { type OpenDatabase, openDatabase } from "./database";
import type { Sql } from "./db/client";
import { DEFAULT_PROJECT } from "./db/vocabulary";
import { ensureSigningKeys, rotateSigningKeys, type SigningKeySource } from "./domain/delivery/signing-keys";
import { AppError } from "./domain/errors";
import { ensureAccessTokens } from "./domain/secrets/stored-secrets";
import type { Log } from "./observability/log";
import type { Quota } from "./domain/projects/quotas";
import { createProjectCommand, deleteProjectCommand, limitProjectCommand, listProjectsCommand, projectEnvOutput } from "./project-commands";
import { createToken, listTokens, revokeToken } from "./token-commands";

/** A command's outcome: what to print and the exit code. */
export interface CommandResult {
  code: number;
  output: string;
}

/** A command and its arguments, as src/cli.ts parsed them. */
export type Command =
  | { name: "migrate" | "token" | "token list" | "keys" | "keys rotate" | "env" | "project list" }
  | { name: "token create"; tokenName: string | null; readOnly: boolean; project: string }
  | { name: "token revoke"; tokenName: string }
  | { name: "project create" | "env --project"; project: string }
  | { name: "project delete"; project: string; force: boolean }
  | { name: "project limit"; project: string; quota: Partial<Quota> };

/** Runs `command` against `config`'s database; a refusal (an unknown token name, say) exits 1 with its message. */
export async function runCommand(command: Command, config: Config, log: Log): Promise<CommandResult> {
  const database = await openDatabase(config, log, command.name === "migrate" || config.migrate);
  try {
    return { code: 0, output: await outputOf(command, config, database) };
  } catch (error) {
    if (error instanceof AppError) return { code: 1, output: error.message };
    throw error;
  } finally {
    await database.close();
  }
}

async function outputOf(command: Command, config: Config, database: OpenDatabase): Promise<string> {
  const { sql, box } = database;
  const keySource = { configured: configuredKeys(config), box };
  switch (command.name) {
    case "migrate":
      return `migrations applied (${database.embedded ? "embedded database" : "DATABASE_URL"})`;
    case "token":
      return (await ensureAccessTokens(sql, box, config.tokens)).value.join("\n");
    case "token create":
      return createToken(sql, { name: command.tokenName, readOnly: command.readOnly, project: command.project });
    case "token list":
      return listTokens(sql, config, box);
    case "token revoke":
      return revokeToken(sql, command.tokenName);
    case "keys":
    case "keys rotate":
      return keysOutput(sql, keySource, command.name === "keys rotate");
    case "env":
      return envOutput(sql, config, keySource);
    case "env --project":
      return projectEnvOutput(sql, config, keySource, command.project);
    case "project create":
      return createProjectCommand(sql, config, keySource, command.project);
    case "project list":
      return listProjectsCommand(sql);
    case "project delete":
      return deleteProjectCommand(sql, command.project, command.force);
    case "project limit":
      return limitProjectCommand(sql, command.project, command.quota);
  }
}

/** The variables the official SDKs read, with the secrets in force (asked for: shown even when configured). */
async function envOutput(sql: Sql, config: Config, keySource: SigningKeySource): Promise<string> {
  const [token] = (await ensureAccessTokens(sql, keySource.box, config.tokens)).value;
  const signingKeys = (await ensureSigningKeys(sql, keySource)).value;
  return sdkEnvironment({ url: configuredBaseUrl(config), token: token!, signingKeys }).join("\n");
}

/** The signing keys in force, rotated first when `rotate`. */
async function keysOutput(sql: Sql, keySource: SigningKeySource, rotate: boolean): Promise<string> {
  let keys = (await ensureSigningKeys(sql, keySource)).value;
  if (rotate) keys = await sql.begin((tx) => rotateSigningKeys(tx, keySource, DEFAULT_PROJECT));
  return `current: ${keys.current}\nnext:    ${keys.next}`;
}
