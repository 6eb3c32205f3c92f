/**
 * Cross-site requests refused on the dashboard's forms, sign-in and sign-out
 * included: a browser says where a request comes from (`Sec-Fetch-Site`, or
 * else `Origin`), and a form posted from another site is a 403 before
 * anything reads it. A request with neither header did not come from a
 * browser's page (curl, a script), which cross-site request forgery needs,
 * and passes; the session's CSRF token still guards every form behind the
 * sign-in. hono's `csrf` middleware is not used: it refuses requests with
 * neither header, and compares `Origin` with the URL the server saw, which
 * differs behind a proxy that ends TLS.
 */
import type { MiddlewareHandler } from "hono";
import { AppError } from "../../../domain/errors";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** Refuses unsafe requests a browser sent from another site. */
export function sameOrigin(): MiddlewareHandler {
  return async (c, next) => {
    if (!SAFE.has(c.req.method) && crossSite(c.req.header("sec-fetch-site"), c.req.header("origin"), c.req.header("host"))) {
      throw new AppError(403, "this form came from another site: open the dashboard and try again there");
    }
    await next();
  };
}

/** Whether a browser's headers say the request came from another site than `host`. */
function crossSite(fetchSite: string | undefined, origin: string | undefined, host: string | undefined): boolean {
  if (fetchSite !== undefined) return fetchSite !== "same-origin" && fetchSite !== "none";
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true; // "null" (a sandboxed or privacy-stripped page) and anything unreadable
  }
}
