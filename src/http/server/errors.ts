/**
 * Error rendering: every error body is `{"error": "..."}`. AppError carries
 * its status; a database outage is a 503 with `Retry-After`; anything else is
 * logged with the request id and rendered as an opaque 500.
 */
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import { HTTPException } from "hono/http-exception";
import type { DatabaseAvailability } from "../../db/availability";
import { AppError } from "../../domain/errors";
import type { Log } from "../../observability/log";

/** Seconds a client is asked to wait before retrying while the database is away. */
const RETRY_AFTER_SECONDS = 2;

/** Renders `error` as the JSON error envelope. */
export function renderError(
  error: Error,
  c: Context,
  deps: { availability: DatabaseAvailability; log: Log },
): Response {
  if (error instanceof AppError) return c.json({ error: error.message }, error.status, error.headers);
  if (error instanceof HTTPException) return c.json({ error: error.message || "request rejected" }, error.status);
  if (deps.availability.failed(error)) {
    c.header("Retry-After", String(RETRY_AFTER_SECONDS));
    return c.json({ error: "the database is unavailable; nothing was changed, retry shortly" }, 503);
  }
  const requestId = c.get("requestId") ?? "-";
  // The route's pattern, not the path: a path can hold a destination URL and its secrets.
  deps.log(`internal error [request ${requestId}] on ${c.req.method} ${routePatternOf(c)}: ${error.stack ?? error.message}`, {
    level: "error",
    requestId,
  });
  return c.json({ error: "internal error", requestId }, 500);
}

/** The pattern of the route a request matched (its handler's, not a middleware's), e.g. `/v2/publish/*`. */
function routePatternOf(c: Context): string {
  const routes = matchedRoutes(c);
  return [...routes].reverse().find((route) => route.method !== "ALL")?.path ?? routes.at(-1)?.path ?? "(no route)";
}
