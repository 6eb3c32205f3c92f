/**
 * The projects' administration over HTTP (a Dispatch extension, what
 * `dispatch project` does): `/admin/projects`, answered to
 * DISPATCH_ADMIN_TOKEN only (server/app.ts). Creating a project, or asking
 * for its environment, answers the four variables its official SDKs read.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { readSigningKeys } from "../../domain/delivery/signing-keys";
import { AppError, badRequest } from "../../domain/errors";
import { projectToken } from "../../domain/projects/project-token";
import { createProject, deleteProject, listProjects, requireProject } from "../../domain/projects/projects";
import { parseQuotaLimit, type Quota, setQuota } from "../../domain/projects/quotas";
import { parseBoolean } from "../../domain/publish/options";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { type Params, singleParam } from "../query";

const ProjectSchema = v.object({
  name: v.string(),
  createdAt: v.pipe(v.number(), v.description("Unix milliseconds.")),
  tokens: v.pipe(v.number(), v.description("Its stored access tokens.")),
  pendingMessages: v.pipe(v.number(), v.description("Its messages not yet delivered, failed or cancelled.")),
  messagesPerDay: v.pipe(v.nullable(v.number()), v.description("Its daily quota of messages (UTC days); null for none.")),
  publishesPerSecond: v.pipe(v.nullable(v.number()), v.description("Its quota of publish requests a second (per API process); null for none.")),
});
const EnvironmentSchema = v.object({
  QSTASH_URL: v.string(),
  QSTASH_TOKEN: v.string(),
  QSTASH_CURRENT_SIGNING_KEY: v.string(),
  QSTASH_NEXT_SIGNING_KEY: v.string(),
});
const NAME = { name: "The project's name: 1-63 lower-case letters, digits, `_` or `-`." };
const EXTENSION = "A Dispatch extension, with DISPATCH_ADMIN_TOKEN.";

const LIST = operation({
  summary: "List projects",
  description: EXTENSION,
  tag: "Projects",
  access: "admin-token",
  responses: { 200: { description: "The projects, by name.", json: v.array(ProjectSchema) } },
});
const CREATE = operation({
  summary: "Create a project",
  description: `${EXTENSION} Makes the project, a full token of it and its signing keys; answers the variables its SDKs read.`,
  tag: "Projects",
  access: "admin-token",
  path: NAME,
  responses: { 200: { description: "The project's environment.", json: EnvironmentSchema } },
  errors: [409],
});
const ENV = operation({
  summary: "A project's environment",
  description: `${EXTENSION} The variables its SDKs read, again (a token revoked meanwhile is replaced).`,
  tag: "Projects",
  access: "admin-token",
  path: NAME,
  responses: { 200: { description: "The project's environment.", json: EnvironmentSchema } },
  errors: [404],
});
const LIMIT = operation({
  summary: "Set a project's quotas",
  description: EXTENSION,
  tag: "Projects",
  access: "admin-token",
  path: NAME,
  query: {
    messagesPerDay: { description: "Messages a day (UTC); 0 for none.", type: "integer" },
    publishesPerSecond: { description: "Publish requests a second, per API process; 0 for none.", type: "integer" },
  },
  responses: { 200: { description: "The project.", json: ProjectSchema } },
  errors: [404],
});
const DELETE = operation({
  summary: "Delete a project",
  description: `${EXTENSION} With all it owns; refused for the default project, and while it holds pending messages unless \`force=true\`.`,
  tag: "Projects",
  access: "admin-token",
  path: NAME,
  query: { force: { description: "Delete it even with pending messages.", type: "boolean" } },
  responses: { 200: { description: "Deleted.", json: v.object({ deletedMessages: v.number() }) } },
  errors: [404, 409],
});

/** Routes mounted at `/admin/projects`. */
export function projectRoutes(deps: AppDeps) {
  const { sql } = deps;
  const name = (c: Context) => c.req.param("name")!;
  const environment = (c: Context, create: boolean) =>
    sql.begin(async (tx) => {
      await (create ? createProject(tx, name(c)) : requireProject(tx, name(c)));
      const keys = await readSigningKeys(tx, deps.signingKeys, name(c));
      return {
        QSTASH_URL: deps.config.baseUrl ?? new URL(c.req.url).origin,
        QSTASH_TOKEN: await projectToken(tx, deps.signingKeys.box, name(c)),
        QSTASH_CURRENT_SIGNING_KEY: keys.current,
        QSTASH_NEXT_SIGNING_KEY: keys.next,
      };
    });
  return new Hono()
    .get("/", LIST.describe, async (c) => c.json((await listProjects(sql)).map(projectJson)))
    .post("/:name", CREATE.describe, async (c) => c.json(await environment(c, true)))
    .get("/:name/env", ENV.describe, async (c) => c.json(await environment(c, false)))
    .post("/:name/limit", LIMIT.describe, async (c) => {
      await setQuota(sql, name(c), quotaOf(LIMIT.query(c)));
      const project = (await listProjects(sql)).find((p) => p.name === name(c));
      if (project === undefined) throw new AppError(404, `no project is named ${JSON.stringify(name(c))}`);
      return c.json(projectJson(project));
    })
    .delete("/:name", DELETE.describe, async (c) => {
      const force = parseBoolean(singleParam(DELETE.query(c), "force") ?? undefined, "force");
      return c.json({ deletedMessages: await sql.begin((tx) => deleteProject(tx, name(c), force)) });
    });
}

/** The quotas the query sets: a whole number each, 0 for none. */
function quotaOf(params: Params): Partial<Quota> {
  const quota: Partial<Quota> = {};
  const limit = (key: "messagesPerDay" | "publishesPerSecond") => {
    const text = singleParam(params, key);
    if (text !== null) quota[key] = parseQuotaLimit(text, key);
  };
  limit("messagesPerDay");
  limit("publishesPerSecond");
  if (Object.keys(quota).length === 0) throw badRequest("give messagesPerDay and/or publishesPerSecond");
  return quota;
}

function projectJson(project: Awaited<ReturnType<typeof listProjects>>[number]) {
  return { ...project, createdAt: project.createdAt.getTime() };
}
