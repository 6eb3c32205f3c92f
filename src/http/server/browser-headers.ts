/**
 * What browsers are told about the pages (the dashboard, the API reference):
 * hono's `secureHeaders` with a strict Content-Security-Policy — every script
 * is a file of ours (`script-src 'self'`, nothing inline, nothing from
 * elsewhere), no framing (`frame-ancestors 'none'`), no referrer, nosniff —
 * and `Cache-Control: no-store` on dashboard pages, which show message bodies
 * and headers. Styles may be inline (the pages' bars and charts are sized with
 * `style` attributes; Swagger UI sets them too). HSTS is sent only on a
 * request that came over https (directly, or as `X-Forwarded-Proto` says):
 * Dispatch itself serves plain http behind whatever terminates TLS.
 */
import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

const POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** How long a browser keeps to https once told (a year). */
const HSTS = "max-age=31536000; includeSubDomains";

const pageHeaders = secureHeaders({
  contentSecurityPolicy: POLICY,
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
  strictTransportSecurity: false,
});

/**
 * The headers of every answer, by its path: a dashboard page (not cached) and
 * the API reference get the browsers' protections; the rest (the JSON API,
 * the document, health, metrics) only nosniff.
 */
export function browserHeaders(): MiddlewareHandler {
  return async (c, next) => {
    const { path } = c.req;
    const dashboard = path === "/dashboard" || path.startsWith("/dashboard/");
    if (!dashboard && path !== "/docs" && !path.startsWith("/docs/")) {
      // Set before the route answers, it joins the answer as it is made. Set on a finished answer,
      // hono remakes it around a stream of its body (~27 µs of a publish's CPU); only an answer a
      // route built as a Response of its own, which leaves prepared headers out, needs that.
      c.header("X-Content-Type-Options", "nosniff");
      await next();
      if (!c.res.headers.has("X-Content-Type-Options")) c.header("X-Content-Type-Options", "nosniff");
      return;
    }
    await pageHeaders(c, next);
    if (dashboard) c.header("Cache-Control", "no-store");
    const forwarded = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if ((forwarded ?? new URL(c.req.url).protocol.slice(0, -1)) === "https") c.header("Strict-Transport-Security", HSTS);
  };
}
