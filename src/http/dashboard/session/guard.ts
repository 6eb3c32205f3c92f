/**
 * The dashboard's gate: every page but sign-in needs a valid session whose
 * token is still configured, and every POST needs a full token and the
 * session's CSRF token. A request without a session is sent to sign in
 * (htmx's refreshes by the `HX-Redirect` header, so a region never fills with
 * the sign-in page). A project's token sees its project; an admin session
 * (DISPATCH_ADMIN_TOKEN) sees the project it chose (project-choice.ts), the
 * default one until it chooses, and every project's name for the chooser.
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { DEFAULT_PROJECT } from "../../../db/vocabulary";
import { AppError } from "../../../domain/errors";
import type { TokenAccess } from "./access";
import type { DashboardEnv } from "../env";
import { type DashboardSessions, SESSION_COOKIE } from "./session";

export const SIGN_IN_PATH = "/dashboard/login";

/** Admits signed-in requests; POSTs also need a full token and the form's CSRF token. */
export function requireSession(
  access: TokenAccess,
  sessions: DashboardSessions,
  projectNames: () => Promise<string[]>,
): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    const cookie = getCookie(c, SESSION_COOKIE);
    const session = await sessions.find(cookie);
    // The token must still be accepted, and the session never does more than it did at sign-in.
    const grant = session === null ? null : access.grantOfDigest(session.tokenDigest);
    if (grant === null || session === null) return signInFirst(c);
    const role = grant.access === "full" ? session.role : "readonly";
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      if (role !== "full") throw new AppError(403, "this token is read-only: it may look at everything and change nothing");
      if (!(await sessions.checkCsrf(cookie!, c.get("form").get("_csrf")))) {
        throw new AppError(403, "this form has expired (or came from another site): reload the page and try again");
      }
    }
    const projects = grant.admin ? await projectNames() : [];
    // A chosen project since deleted leaves its sessions' choice null (a foreign key): the default one again.
    const project = grant.admin ? (session.project ?? DEFAULT_PROJECT) : grant.project;
    const operator = grant.admin || project === DEFAULT_PROJECT;
    c.set("viewer", { role, csrf: await sessions.csrfToken(cookie!), operator, project, projects, admin: grant.admin });
    c.set("project", project);
    await next();
  };
}

/** Sends the browser to sign in, and back to this page afterwards. */
function signInFirst(c: Context): Response {
  const back = c.req.method === "GET" ? new URL(c.req.url).pathname + new URL(c.req.url).search : "/dashboard";
  const target = `${SIGN_IN_PATH}?next=${encodeURIComponent(back)}`;
  if (c.req.header("hx-request") === "true") {
    c.header("HX-Redirect", target);
    return c.body(null, 401);
  }
  return c.redirect(target, 303);
}

/** Where to go after signing in: a dashboard path from `next`, else the overview. */
export function safeNext(next: string | undefined | null): string {
  return next && /^\/dashboard(\/[^\\]*)?$/.test(next) && !next.startsWith("//") ? next : "/dashboard";
}
