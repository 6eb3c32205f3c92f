/** URL groups (topics): endpoints add/remove, get, list, delete (docs/hosted-api.md §5). */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { badRequest } from "../../domain/errors";
import { addEndpoints, deleteUrlGroup, listUrlGroups, removeEndpoints } from "../../domain/url-groups/url-groups";
import { jsonOf } from "../body";
import type { AppDeps } from "../deps";

const EndpointsSchema = v.object({
  endpoints: v.pipe(
    v.array(v.object({ url: v.optional(v.string()), name: v.optional(v.string()) }), "endpoints must be an array"),
    v.maxLength(1000, "at most 1000 endpoints per request"),
  ),
});

function endpointsOf(c: Context) {
  const body = v.safeParse(EndpointsSchema, jsonOf(c));
  if (!body.success) throw badRequest(`invalid endpoints: ${body.issues[0]!.message}`);
  return body.output.endpoints;
}

/** Routes of the URL group resource. */
export function topicRoutes(deps: AppDeps) {
  const { sql } = deps;
  return new Hono()
    .get("/", async (c) => c.json(await listUrlGroups(sql)))
    .get("/:name", async (c) => c.json((await listUrlGroups(sql, c.req.param("name")))[0]))
    .delete("/:name", async (c) => {
      await sql.begin((tx) => deleteUrlGroup(tx, c.req.param("name")));
      return c.json({});
    })
    .post("/:name/endpoints", async (c) => {
      const endpoints = endpointsOf(c);
      if (endpoints.some((endpoint) => !endpoint.url)) throw badRequest("each endpoint needs a url");
      await sql.begin((tx) =>
        addEndpoints(tx, c.req.param("name"), endpoints.map((e) => ({ url: e.url!, name: e.name }))),
      );
      return c.json({});
    })
    .delete("/:name/endpoints", async (c) => {
      const endpoints = endpointsOf(c);
      await sql.begin((tx) => removeEndpoints(tx, c.req.param("name"), endpoints.map((e) => ({ url: e.url ?? "", name: e.name }))));
      return c.json({});
    });
}
