/**
 * Error rendering: every error body is `{"error": "..."}`. AppError carries
 * its status; anything else is logged and rendered as an opaque 500.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError } from "../domain/errors";

/** Renders `error` as the JSON error envelope. */
export function renderError(error: Error, c: Context, log: (message: string) => void): Response {
  if (error instanceof AppError) return c.json({ error: error.message }, error.status);
  if (error instanceof HTTPException) return c.json({ error: error.message || "request rejected" }, error.status);
  log(`internal error on ${c.req.method} ${c.req.path}: ${error.stack ?? error.message}`);
  return c.json({ error: "internal error" }, 500);
}
