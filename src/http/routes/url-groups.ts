/** URL groups (topics): endpoints add/remove, get, list, delete (docs/hosted-api.md §5). */
import { Hono } from "hono";
import * as v from "valibot";
import { badRequest } from "../../domain/errors";
import { addEndpoints, deleteUrlGroup, listUrlGroups, removeEndpoints } from "../../domain/url-groups/url-groups";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";

const ENDPOINTS = {
  name: "endpoints",
  json: v.object({
    endpoints: v.pipe(
      v.array(v.object({ url: v.optional(v.string()), name: v.optional(v.string()) }), "endpoints must be an array"),
      v.maxLength(1000, "at most 1000 endpoints per request"),
    ),
  }),
};
const URL_GROUP = v.looseObject({
  name: v.string(),
  createdAt: v.number(),
  updatedAt: v.number(),
  endpoints: v.array(v.looseObject({ url: v.string(), name: v.optional(v.string()) })),
});
const NAME = { name: "The URL group's name." };

const LIST = operation({
  summary: "List URL groups",
  tag: "URL groups",
  access: "read",
  responses: { 200: { description: "The URL groups with their endpoints.", json: v.array(URL_GROUP) } },
});
const GET = operation({
  summary: "Get a URL group",
  tag: "URL groups",
  access: "read",
  path: NAME,
  responses: { 200: { description: "The URL group.", json: URL_GROUP } },
  errors: [404],
});
const DELETE = operation({
  summary: "Delete a URL group",
  description: "A name no group has changes nothing and answers 200, as every delete of a named resource does.",
  tag: "URL groups",
  access: "full-token",
  path: NAME,
  responses: { 200: "Deleted (or there was none)." },
});
const ADD = operation({
  summary: "Add endpoints",
  description: "Creates the URL group when new. Publishing to the group sends one message to each endpoint.",
  tag: "URL groups",
  access: "full-token",
  path: NAME,
  body: ENDPOINTS,
  responses: { 200: "Added." },
  errors: [412],
});
const REMOVE = operation({
  summary: "Remove endpoints",
  description: "Each endpoint is named by its url or its name. The group goes when its last endpoint does.",
  tag: "URL groups",
  access: "full-token",
  path: NAME,
  body: ENDPOINTS,
  responses: { 200: "Removed." },
  errors: [404],
});

/** Routes of the URL group resource. */
export function urlGroupRoutes(deps: AppDeps) {
  const { sql } = deps;
  return new Hono()
    .get("/", LIST.describe, async (c) => c.json(await listUrlGroups(sql, c.get("project"))))
    .get("/:name", GET.describe, async (c) => c.json((await listUrlGroups(sql, c.get("project"), c.req.param("name")))[0]))
    .delete("/:name", DELETE.describe, async (c) => {
      await sql.begin((tx) => deleteUrlGroup(tx, c.get("project"), c.req.param("name")));
      return c.json({});
    })
    .post("/:name/endpoints", ADD.describe, async (c) => {
      const { endpoints } = ADD.body(c);
      if (endpoints.some((endpoint) => !endpoint.url)) throw badRequest("each endpoint needs a url");
      await sql.begin((tx) =>
        addEndpoints(tx, c.get("project"), c.req.param("name"), endpoints.map((e) => ({ url: e.url!, name: e.name })), deps.guard),
      );
      return c.json({});
    })
    .delete("/:name/endpoints", REMOVE.describe, async (c) => {
      const { endpoints } = REMOVE.body(c);
      await sql.begin((tx) => removeEndpoints(tx, c.get("project"), c.req.param("name"), endpoints.map((e) => ({ url: e.url ?? "", name: e.name }))));
      return c.json({});
    });
}
