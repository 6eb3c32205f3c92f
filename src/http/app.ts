/**
 * `createApp(deps)`: the HTTP API as a Hono app, one sub-app per resource.
 * Every /v2 route needs a token; errors are `{"error": "..."}`.
 */
import { Hono } from "hono";
import type { AppDeps } from "./deps";
import { renderError } from "./errors";
import { limitBody, requireToken } from "./middleware";
import { messageRoutes } from "./routes/messages";
import { publishRoutes } from "./routes/publish";
import { queueRoutes } from "./routes/queues";
import { topicRoutes } from "./routes/topics";

/** Builds the API over its dependencies. */
export function createApp(deps: AppDeps) {
  const v2 = new Hono()
    .use(requireToken(deps.tokens))
    // The outer bound; publishing routes apply the message size limit themselves.
    .use(limitBody(deps.config.maxMessageBytes * 10))
    .route("/", publishRoutes(deps))
    .route("/messages", messageRoutes(deps))
    .route("/queues", queueRoutes(deps))
    .route("/topics", topicRoutes(deps));

  return new Hono({ strict: false })
    .get("/health", async (c) => {
      await deps.sql`select 1`;
      return c.json({ status: "ok" });
    })
    .route("/v2", v2)
    .notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404))
    .onError((error, c) => renderError(error, c, deps.log));
}
