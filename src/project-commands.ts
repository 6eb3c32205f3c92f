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
import { type Quota, setQuota } from "./domain/projects/quotas";

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

/** One line per project: its name, tokens, pending messages and quotas. */
export async function listProjectsCommand(sql: Sql): Promise<string> {
  return (await listProjects(sql))
    .map((p) => `${p.name} (created ${p.createdAt.toISOString()}; ${p.tokens} stored tokens; ${p.pendingMessages} pending messages${quotaText(p)})`)
    .join("\n");
}

/** Sets a project's quotas (null: none) and says what they are now. */
export async function limitProjectCommand(sql: Sql, name: string, quota: Partial<Quota>): Promise<string> {
  await setQuota(sql, name, quota);
  const [project] = (await listProjects(sql)).filter((p) => p.name === name);
  return `project ${name}: ${quotaText(project ?? { messagesPerDay: null, publishesPerSecond: null }).slice(2) || "no quotas"}`;
}

/** "; quotas: 1000 messages a day, 10 publishes a second", or nothing without quotas. */
function quotaText({ messagesPerDay, publishesPerSecond }: Quota): string {
  const parts = [
    ...(messagesPerDay === null ? [] : [`${messagesPerDay} messages a day`]),
    ...(publishesPerSecond === null ? [] : [`${publishesPerSecond} publishes a second`]),
  ];
  return parts.length === 0 ? "" : `; quotas: ${parts.join(", ")}`;
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
