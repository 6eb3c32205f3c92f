/** Small, single-purpose middleware of the API. */
import type { MiddlewareHandler } from "hono";
import { tokenDigest } from "../../domain/access-tokens/access-tokens";
import { grantOf, type TokenSet } from "../../domain/access-tokens/token-set";
import { AppError } from "../../domain/errors";
import type { AuthFailures } from "../auth-failures";
import { requestParts } from "../request";

/**
 * Requires `Authorization: Bearer <token>` or `?qstash_token=<token>` to be
 * one of `tokens`' full or read-only tokens, compared in constant time
 * (hashing first evens out lengths); one the set does not hold yet is looked
 * up where tokens are stored before the 401. A read-only token may call only
 * the operations declared `read` (openapi/operation.ts checks it as the route
 * answers); here, as a second line, it may not use a method that changes
 * anything. The set is asked at each request, so a token created or revoked
 * since applies.
 */
export function requireToken(tokens: TokenSet, failures: AuthFailures): MiddlewareHandler {
  const digests = new AcceptedDigests();
  return async (c, next) => {
    failures.check(c);
    const header = requestParts(c).headers.authorization;
    const bearer = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const presented = bearer ?? c.req.query("qstash_token");
    if (presented === undefined) {
      failures.failed(c);
      throw new AppError(401, "missing Authorization: Bearer <token>");
    }
    const digest = digests.of(presented);
    const grant = grantOf(tokens.current(), digest) ?? (await tokens.lookup?.(digest)) ?? null;
    if (grant === null) {
      failures.failed(c);
      throw new AppError(401, "invalid token");
    }
    digests.accepted(presented, digest);
    tokens.noteUse?.(digest);
    if (grant.access === "readonly" && c.req.method !== "GET" && c.req.method !== "HEAD") {
      throw new AppError(403, `this token is read-only: ${c.req.method} ${c.req.path} needs a full token`);
    }
    c.set("access", grant.access);
    c.set("project", grant.project);
    await next();
  };
}

/**
 * The digests of the tokens accepted lately, so that a client's every request
 * does not hash its token again. Only accepted tokens are kept, and at most
 * `MAX_KEPT`: made-up tokens cannot grow it. A digest is only a function of
 * its token: a revoked token's digest kept here is still checked against the
 * current set at each request, and refused.
 */
class AcceptedDigests {
  private static readonly MAX_KEPT = 64;
  private readonly kept = new Map<string, Buffer>();

  of(token: string): Buffer {
    return this.kept.get(token) ?? tokenDigest(token);
  }

  accepted(token: string, digest: Buffer): void {
    if (this.kept.has(token)) return;
    if (this.kept.size >= AcceptedDigests.MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(token, digest);
  }
}
