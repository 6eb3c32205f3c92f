/**
 * What comes in through the URL and the headers is checked once, by
 * `checkRequestInput`, called before every route (server/every-request.ts):
 * each path parameter, query parameter (name and value) and header value
 * must decode as UTF-8 (percent-encoding included) and be text Postgres can
 * store (`checkText`: no NUL, no unpaired surrogate, a bounded size), else a
 * 400 naming it. Path parameters are ids and names, bounded by
 * `MAX_ID_BYTES`. Bodies are checked where they are read (`jsonOf`, `textOf`).
 *
 * Part of the middleware every request passes rather than a helper every
 * route reads its parameters through: a new route cannot forget it. Path
 * parameters are only known per route, so it reads the patterns of the
 * routes the request matched (hono's `matchedRoutes`) and checks the path
 * segments at their `:name` positions.
 */
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { RouterRoute } from "hono/types";
import { checkText, MAX_ID_BYTES } from "../domain/storable-text";
import { decodeComponent, isOwnParameter, requestParts } from "./request";

/**
 * Bound of a query parameter's name and of its value, in UTF-8 bytes. A
 * filter may be a URL or a comma-joined list of ids (100 message ids take
 * 3.3 KB). Node's own limit of 16 KiB for the request line and headers
 * together is the outer bound, and the only one for header values, which may
 * be long tokens a destination needs.
 */
export const MAX_QUERY_PARAMETER_BYTES = 8192;

/**
 * Rejects (throws a 400 for) a request whose path parameters, query
 * parameters or header values are not storable text. Header values need no decoding: node answers 400
 * itself to NUL and other control bytes in a header, and hands bytes
 * 0x80-0xFF over as latin1 characters (U+0080-U+00FF), which are valid text
 * and stored as given.
 *
 * Publish, enqueue and trigger take a destination URL after the route's `*`:
 * that rest of the path and the query parameters that are not Dispatch's own
 * belong to the destination and are kept byte for byte (`rawDestination`,
 * which checks a destination it has to decode).
 */
export function checkRequestInput(c: Context): void {
  const { pathname, query, headers } = requestParts(c);
  const patterns = handlingRoutes(matchedRoutes(c)).map(patternOf);
  checkPathParameters(pathname.split("/"), patterns);
  const destination = patterns.some((pattern) => pattern.destination);
  if (query !== "") {
    for (const part of query.split("&")) {
      if (part !== "" && (!destination || isOwnParameter(part))) checkQueryParameter(part);
    }
  }
  for (const name in headers) checkText(headers[name]!, `header ${name}`);
}

/** A matched route's path pattern, split at `/`. */
interface Pattern {
  segments: string[];
  /** Whether the route takes a destination URL at its final `*`. */
  destination: boolean;
}

/**
 * The middleware and the one route that answers: routes registered later for
 * the same path (`POST /v2/schedules/*` after `POST /v2/schedules/:id/pause`)
 * match too but never run, so their patterns say nothing about this request.
 */
function handlingRoutes(routes: RouterRoute[]): RouterRoute[] {
  const handler = answeringRoute(routes);
  return routes.filter((route) => route.method === "ALL" || route === handler);
}

/** The route that answers among those a request matched (the first that is not middleware). */
export function answeringRoute(routes: RouterRoute[]): RouterRoute | undefined {
  return routes.find((route) => route.method !== "ALL");
}


/** Each route's pattern, split once (the routes live as long as the app). */
const patterns = new WeakMap<RouterRoute, Pattern>();

function patternOf(route: RouterRoute): Pattern {
  let pattern = patterns.get(route);
  if (pattern === undefined) {
    // Middleware (`use`) is registered for every method (`ALL`); a route of one method ending in `*` takes a destination.
    pattern = { segments: route.path.split("/"), destination: route.method !== "ALL" && route.path.endsWith("/*") };
    patterns.set(route, pattern);
  }
  return pattern;
}

function checkPathParameters(segments: string[], patterns: Pattern[]): void {
  const destinationAt = Math.min(...patterns.filter((p) => p.destination).map((p) => p.segments.length - 1));
  const checked = new Set<number>();
  for (const pattern of patterns) {
    pattern.segments.forEach((segment, index) => {
      const value = segments[index];
      if (!segment.startsWith(":") || index >= destinationAt || checked.has(index) || value === undefined) return;
      checked.add(index);
      // `:id`, `:id?` or `:id{regex}` all name the parameter `id`.
      decodeComponent(value, `path parameter "${segment.slice(1).replace(/[?{].*$/, "")}"`, MAX_ID_BYTES);
    });
  }
}

function checkQueryParameter(part: string): void {
  // In a query, `+` stands for a space.
  const [rawName, ...rest] = part.replaceAll("+", " ").split("=");
  const name = decodeComponent(rawName!, "a query parameter name", MAX_QUERY_PARAMETER_BYTES);
  decodeComponent(rest.join("="), `query parameter "${name}"`, MAX_QUERY_PARAMETER_BYTES);
}
