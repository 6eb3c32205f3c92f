/**
 * `POST /v2/publish/{destination}`: store a message for a URL and schedule its
 * delivery. (URL groups and `api/llm` destinations arrive with their issues.)
 */
import { Hono } from "hono";
import { badRequest } from "../../domain/errors";
import { buildMessage, publishMessage } from "../../domain/publish";
import { parsePublishOptions } from "../../domain/publish-options";
import type { AppDeps } from "../deps";
import { callerIp, rawDestination, requestHeaders } from "../request";

/** Routes of the publish resource. */
export function publishRoutes(deps: AppDeps) {
  return new Hono().post("/*", async (c) => {
    const destination = parseUrlDestination(rawDestination(c, "/v2/publish/"));
    const { headers, dialect } = requestHeaders(c);
    const options = parsePublishOptions(headers, dialect, deps.config);
    const body = Buffer.from(await c.req.arrayBuffer());
    const message = buildMessage(options, { url: destination }, body, {
      origin: "publish",
      sourceMessageId: null,
      callerIp: callerIp(c),
    });
    const result = await deps.sql.begin((tx) => publishMessage(tx, message, deps.config.deduplicationWindowMs));
    return c.json(result, result.deduplicated ? 202 : 200);
  });
}

/** An absolute http(s) URL with a host, or a 400 saying what a destination may be. */
export function parseUrlDestination(destination: string): string {
  if (destination === "") throw badRequest("missing destination: publish to /v2/publish/<url>");
  if (!/^https?:\/\//i.test(destination)) {
    throw badRequest(`invalid destination "${destination}": a destination URL must start with http:// or https://`);
  }
  try {
    if (new URL(destination).hostname === "") throw new Error();
  } catch {
    throw badRequest(`invalid destination url "${destination}"`);
  }
  return destination;
}
