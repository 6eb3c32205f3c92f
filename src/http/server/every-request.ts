/**
 * What every request passes through before its route, in one middleware: its
 * id, its path, query and headers checked (input.ts), the headers browsers
 * are told (browser-headers.ts), and its duration measured and logged. One
 * pass of hono's chain instead of four (issue 39): each link of the chain is
 * a closure, a promise and a turn of `compose` on every publish.
 */
import type { Context, ErrorHandler, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { Log } from "../../observability/log";
import type { Metrics } from "../../observability/metrics";
import { answeringRoute, checkRequestInput } from "../input";
import { requestParts } from "../request";
import { browserHeaders } from "./browser-headers";

/**
 * `answerError` is the app's error handler: an input the check refuses is
 * answered here, inside the timing, so that the 400 is measured and logged
 * as any other answer.
 */
export function everyRequest(deps: { metrics: Pick<Metrics, "requestSeconds">; log: Log }, answerError: ErrorHandler): MiddlewareHandler {
  const headers = browserHeaders();
  // The access log is a debug line: nothing of it is built when debug lines go nowhere.
  const accessLog = deps.log.hears?.("debug") ?? true;
  return async (c, next) => {
    const started = performance.now();
    identify(c);
    try {
      await headers(c, async () => {
        try {
          checkRequestInput(c);
        } catch (error) {
          c.res = await answerError(error as Error, c);
          return;
        }
        await next();
      });
    } finally {
      const route = answeringRoute(matchedRoutes(c))?.path ?? "unmatched";
      const status = c.res.status;
      const ms = performance.now() - started;
      deps.metrics.requestSeconds.observe({ method: c.req.method, route, status }, ms / 1000);
      if (accessLog) {
        // The project is known once a token was accepted (middleware.ts `requireToken`).
        deps.log(`${c.req.method} ${route} ${status} in ${ms.toFixed(1)} ms`, { level: "debug", requestId: c.get("requestId"), project: c.get("project") });
      }
    }
  };
}

/**
 * The request's id: the client's `X-Request-Id` when it is a short word
 * (letters, digits, `_`, `-`, `=`), else a new UUID; set as `requestId` for
 * the logs and answered in `X-Request-Id`. As hono's `requestId`, but reading
 * the header from `requestParts`, so no Fetch `Headers` is built for it.
 */
function identify(c: Context): void {
  const given = requestParts(c).headers["x-request-id"];
  const id = given !== undefined && given !== "" && given.length <= 255 && !/[^\w\-=]/.test(given) ? given : crypto.randomUUID();
  c.set("requestId", id);
  c.header("X-Request-Id", id);
}
