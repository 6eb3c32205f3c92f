/**
 * The dashboard, served by the API process at `/dashboard`: server-rendered
 * pages (hono/jsx) over the same domain functions as the API, refreshed in
 * place by htmx. Sign-in takes a Dispatch token (access.ts); every other page
 * needs the session it makes (guard.ts), and every change is a POST with the
 * session's CSRF token, made by a full token. Each page is a short handler
 * (views/<section>/routes.tsx) rendering a page component in the one layout.
 */
import { Hono } from "hono";
import { projectNames } from "../../../domain/projects/projects";
import { ensureSessionKey } from "../../../domain/secrets/stored-secrets";
import type { AppDeps } from "../../deps";
import { tokenAccess } from "../session/access";
import { dashboardAssets } from "../shell/assets";
import type { DashboardEnv } from "../env";
import { readForm } from "../kit/form";
import { requireSession } from "../session/guard";
import { type Frame, pageLayout } from "../shell/layout";
import { signInRoutes } from "../session/sign-in";
import { destinationRoutes } from "../views/destinations/routes";
import { dlqRoutes } from "../views/dlq/routes";
import { flowControlRoutes } from "../views/flow-control/routes";
import { keyRoutes } from "../views/keys/routes";
import { messageRoutes } from "../views/messages/routes";
import { overviewRoutes } from "../views/overview/routes";
import { publishRoutes } from "../views/publish/routes";
import { queueRoutes } from "../views/queues/routes";
import { scheduleRoutes } from "../views/schedules/routes";
import { urlGroupRoutes } from "../views/url-groups/routes";
import { workflowRoutes } from "../views/workflows/routes";
import { projectChoiceRoutes } from "../session/project-choice";
import { sameOrigin } from "../session/same-origin";
import { DashboardSessions } from "../session/session";
import type { AuthFailures } from "../../auth-failures";

/** The dashboard's routes (mounted at `/dashboard`) and the frame its error pages use. */
export function dashboard(deps: AppDeps, failures: AuthFailures) {
  const { paths, routes: assets } = dashboardAssets();
  const access = tokenAccess(deps.acceptedTokens, deps.config.adminToken);
  const sessions = new DashboardSessions(deps.sql, memo(() => ensureSessionKey(deps.sql, deps.secretBox)), deps.config.sessionIdleMs);
  const frame: Frame = { assets: paths, viewer: null };
  const routes = new Hono<DashboardEnv>({ strict: false })
    .route("/assets", assets)
    .use(sameOrigin())
    .use(readForm())
    .use(pageLayout(paths))
    .route("/", signInRoutes(access, sessions, failures))
    .use(requireSession(access, sessions, () => projectNames(deps.sql)))
    .route("/", projectChoiceRoutes(deps.sql, sessions))
    .route("/", overviewRoutes(deps))
    .route("/", messageRoutes(deps))
    .route("/", publishRoutes(deps))
    .route("/", dlqRoutes(deps))
    .route("/", destinationRoutes(deps))
    .route("/", queueRoutes(deps))
    .route("/", urlGroupRoutes(deps))
    .route("/", scheduleRoutes(deps))
    .route("/", flowControlRoutes(deps))
    .route("/", workflowRoutes(deps))
    .route("/", keyRoutes(deps));
  return { routes, frame };
}

/** `load` once; again after a failure (the database may have been away). */
function memo<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | null = null;
  return () => (value ??= load().catch((error: unknown) => {
    value = null;
    throw error;
  }));
}
