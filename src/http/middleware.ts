/** Small, single-purpose middleware of the /v2 API. */
import { hash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { AppError } from "../domain/errors";

const digest = (text: string) => hash("sha256", text, "buffer");

/**
 * Requires `Authorization: Bearer <token>` or `?qstash_token=<token>` to match
 * one of `tokens`, compared in constant time (hashing first evens out lengths).
 */
export function requireToken(tokens: string[]): MiddlewareHandler {
  const expected = tokens.map(digest);
  return async (c, next) => {
    const header = c.req.header("authorization");
    const bearer = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const presented = bearer ?? c.req.query("qstash_token");
    if (presented === undefined) throw new AppError(401, "missing Authorization: Bearer <token>");
    const candidate = digest(presented);
    let valid = false;
    for (const token of expected) valid = timingSafeEqual(candidate, token) || valid;
    if (!valid) throw new AppError(401, "invalid token");
    await next();
  };
}
