/**
 * Projects (issue 37): the teams one Dispatch serves. Each owns its tokens,
 * its signing keys (delivery/signing-keys.ts) and every resource; `default`
 * owns what predates projects and cannot be deleted. Deleting a project
 * deletes all it owns: the operator's tables by their foreign keys, the
 * delivery path's rows (which carry the project without one) here.
 */
import type { Transaction, Tx } from "../../db/client";
import { DEFAULT_PROJECT, PENDING_STATES } from "../../db/vocabulary";
import { ACCESS_TOKENS_CHANNEL } from "../access-tokens/access-tokens";
import { AppError, badRequest } from "../errors";

/** A project as operators see it. */
export interface ProjectEntry {
  name: string;
  createdAt: Date;
  /** Its stored access tokens. */
  tokens: number;
  /** Its messages not yet delivered, failed or cancelled. */
  pendingMessages: number;
  /** Its quotas (quotas.ts); null for none. */
  messagesPerDay: number | null;
  publishesPerSecond: number | null;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** `name` when it can name a project, else a 400 saying what a name may hold. */
export function checkProjectName(name: string): string {
  if (!NAME.test(name)) {
    throw badRequest(`invalid project name ${JSON.stringify(name)}: use 1-63 lower-case letters, digits, "_" or "-", starting with a letter or digit`);
  }
  return name;
}

/** Creates project `name`; a 409 when it exists. */
export async function createProject(tx: Tx, name: string): Promise<void> {
  const [created] = await tx`insert into dispatch.projects (name) values (${checkProjectName(name)}) on conflict do nothing returning name`;
  if (!created) throw new AppError(409, `a project named ${name} already exists`);
}

/** A 404 unless project `name` exists. */
export async function requireProject(sql: Tx, name: string): Promise<void> {
  const [found] = NAME.test(name) ? await sql`select 1 from dispatch.projects where name = ${name}` : [];
  if (!found) throw new AppError(404, `no project is named ${JSON.stringify(name)} (dispatch project list shows them)`);
}

/** Every project's name, in order. */
export async function projectNames(sql: Tx): Promise<string[]> {
  return (await sql<{ name: string }[]>`select name from dispatch.projects order by name`).map((row) => row.name);
}

/** Every project, by name, with its tokens and pending messages counted. */
export async function listProjects(sql: Tx): Promise<ProjectEntry[]> {
  return sql<ProjectEntry[]>`
    select p.name, p.created_at as "createdAt", p.messages_per_day as "messagesPerDay", p.publishes_per_second as "publishesPerSecond",
      (select count(*)::int from dispatch.access_tokens t where t.project = p.name) as tokens,
      (select count(*)::int from dispatch.messages m where m.project = p.name and m.state = any(${PENDING_STATES}::text[])) as "pendingMessages"
    from dispatch.projects p order by p.name`;
}

/**
 * Deletes project `name` and everything it owns. The default project cannot
 * go (409), nor one with pending messages unless `force` (409 saying how
 * many); its tokens stop working at once (a NOTIFY to the API processes).
 * Returns how many messages went with it.
 */
export async function deleteProject(tx: Transaction, name: string, force: boolean): Promise<number> {
  if (name === DEFAULT_PROJECT) throw new AppError(409, "the default project cannot be deleted: it owns what predates projects");
  await requireProject(tx, name);
  // Locked first: a token of the project publishing meanwhile waits, then finds its project gone.
  await tx`select 1 from dispatch.projects where name = ${name} for update`;
  const [pending] = await tx<{ n: number }[]>`
    select count(*)::int as n from dispatch.messages where project = ${name} and state = any(${PENDING_STATES}::text[])`;
  if (pending!.n > 0 && !force) {
    throw new AppError(409, `project ${name} holds ${pending!.n} pending messages: wait for them, or delete it anyway with --force`);
  }
  await tx`delete from dispatch.dlq where project = ${name}`;
  await tx`delete from dispatch.attempts a using dispatch.messages m where m.project = ${name} and a.message_id = m.id`;
  await tx`delete from dispatch.message_events_legacy e using dispatch.messages m where m.project = ${name} and e.message_id = m.id`;
  const messages = await tx`delete from dispatch.messages where project = ${name}`;
  await tx`delete from dispatch.deduplication_keys where project = ${name}`;
  await tx`delete from dispatch.workflow_notifications where project = ${name}`;
  // Their steps and waiters go with the runs (foreign keys).
  await tx`delete from dispatch.workflow_runs where project = ${name}`;
  await tx`delete from dispatch.access_token_uses u using dispatch.access_tokens t where t.project = ${name} and u.digest = t.digest`;
  await tx`delete from dispatch.settings where key in (${`signing_keys:${name}`}, ${`access_token:${name}`})`;
  // Its tokens, queues, schedules, flow-control keys and URL groups go by their foreign keys.
  await tx`delete from dispatch.projects where name = ${name}`;
  await tx`select pg_notify(${ACCESS_TOKENS_CHANNEL}, '')`;
  return messages.count;
}
