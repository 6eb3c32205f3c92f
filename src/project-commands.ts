/**
 * `dispatch project create|list|delete` and `dispatch env --project`: the
 * projects one Dispatch serves (domain/projects/). `create` prints the
 * project's four `QSTASH_*` lines, ready for its team's `.env`; they work at
 * once beside running API processes (new tokens are announced by NOTIFY).
 */
import { configuredBaseUrl, sdkEnvironment } from "./banner";
import type { Config } from "./config/config";
import type { Sql, Transaction } from "./db/client";
import { readSigningKeys, type SigningKeySource } from "./domain/delivery/signing-keys";
import { projectToken } from "./domain/projects/project-token";
import { createProject, deleteProject, listProjects, requireProject } from "./domain/projects/projects";

/** Creates project `name` with a token and a signing-key pair, and prints its `.env` lines. */
export async function createProjectCommand(sql: Sql, config: Config, keySource: SigningKeySource, name: string): Promise<string> {
  const lines = await sql.begin(async (tx) => {
    await createProject(tx, name);
    return projectEnvironment(tx, config, keySource, name);
  });
  return [`# project ${name}: the variables its official SDKs read (dispatch env --project ${name} prints them again)`, ...lines].join("\n");
}

/** The `.env` lines of an existing project. */
export async function projectEnvOutput(sql: Sql, config: Config, keySource: SigningKeySource, name: string): Promise<string> {
  const lines = await sql.begin(async (tx) => {
    await requireProject(tx, name);
    return projectEnvironment(tx, config, keySource, name);
  });
  return lines.join("\n");
}

/** One line per project: its name, tokens and pending messages. */
export async function listProjectsCommand(sql: Sql): Promise<string> {
  return (await listProjects(sql))
    .map((p) => `${p.name} (created ${p.createdAt.toISOString()}; ${p.tokens} stored tokens; ${p.pendingMessages} pending messages)`)
    .join("\n");
}

/** Deletes project `name` and all it owns; refused while it holds pending messages unless `force`. */
export async function deleteProjectCommand(sql: Sql, name: string, force: boolean): Promise<string> {
  const messages = await sql.begin((tx) => deleteProject(tx, name, force));
  return `deleted project ${name}, its tokens, keys and resources, and its ${messages} messages`;
}

async function projectEnvironment(tx: Transaction, config: Config, keySource: SigningKeySource, name: string) {
  const token = await projectToken(tx, keySource.box, name);
  const signingKeys = await readSigningKeys(tx, keySource, name);
  return sdkEnvironment({ url: configuredBaseUrl(config), token, signingKeys });
}
