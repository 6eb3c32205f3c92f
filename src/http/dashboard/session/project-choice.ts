/**
 * An admin session's choice of project (`POST /dashboard/project`): every
 * page after it shows that project, as its own token would see it. Only a
 * session signed in with DISPATCH_ADMIN_TOKEN chooses (guard.ts gives it the
 * project names); a project's token sees its own project and no other.
 */
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { Sql } from "../../../db/client";
import { AppError } from "../../../domain/errors";
import { requireProject } from "../../../domain/projects/projects";
import type { DashboardEnv } from "../env";
import { type DashboardSessions, SESSION_COOKIE } from "./session";

export const PROJECT_CHOICE_PATH = "/dashboard/project";

/** `POST /dashboard/project`: the admin session looks at the form's `project` from now on; back to the overview. */
export function projectChoiceRoutes(sql: Sql, sessions: DashboardSessions) {
  return new Hono<DashboardEnv>().post("/project", async (c) => {
    if (!c.get("viewer").admin) {
      throw new AppError(403, "only a session signed in with the admin token chooses a project: a project's token sees its own");
    }
    const project = c.get("form").get("project") ?? "";
    await requireProject(sql, project);
    await sessions.choose(getCookie(c, SESSION_COOKIE)!, project);
    return c.redirect("/dashboard", 303);
  });
}
