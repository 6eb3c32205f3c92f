/**
 * The dashboard, served by the API process at `/dashboard`: server-rendered
 * pages (hono/jsx) over the same domain functions as the API, refreshed in
 * place by htmx. Sign-in takes a Dispatch token (access.ts); every other page
 * needs the session it makes (guard.ts), and every change is a POST with the
 * session's CSRF token, made by a full token.
 */
import { Hono } from "hono";
import { ensureSessionKey } from "../../../domain/settings";
import type { AppDeps } from "../../deps";
import { tokenAccess } from "../access";
import { dashboardAssets } from "../assets";
import type { DashboardEnv } from "../env";
import { readForm } from "../form";
import { requireSession } from "../guard";
import type { Frame } from "../layout";
import { signInRoutes } from "../sign-in";
import { dlqRoutes } from "../views/dlq";
import { flowControlRoutes } from "../views/flow-control";
import { messageRoutes } from "../views/message";
import { messageListRoutes } from "../views/messages";
import { overviewRoutes } from "../views/overview";
import { queueRoutes } from "../views/queues";
import { scheduleRoutes } from "../views/schedules";
import { urlGroupRoutes } from "../views/url-groups";
import { workflowRunRoutes } from "../views/workflow-run";
import { workflowListRoutes } from "../views/workflows";

/** The dashboard's routes (mounted at `/dashboard`) and the frame its error pages use. */
export function dashboard(deps: AppDeps) {
  const { paths, routes: assets } = dashboardAssets();
  const pageDeps = { ...deps, assets: paths };
  const access = tokenAccess(deps.acceptedTokens);
  const sessionKey = memo(() => ensureSessionKey(deps.sql));
  const frame: Frame = { assets: paths, viewer: null };
  const routes = new Hono<DashboardEnv>({ strict: false })
    .route("/assets", assets)
    .use(readForm())
    .route("/", signInRoutes(frame, access, sessionKey))
    .use(requireSession(access, sessionKey))
    .route("/", overviewRoutes(pageDeps))
    .route("/", messageListRoutes(pageDeps))
    .route("/", messageRoutes(pageDeps))
    .route("/", dlqRoutes(pageDeps))
    .route("/", queueRoutes(pageDeps))
    .route("/", urlGroupRoutes(pageDeps))
    .route("/", scheduleRoutes(pageDeps))
    .route("/", flowControlRoutes(pageDeps))
    .route("/", workflowListRoutes(pageDeps))
    .route("/", workflowRunRoutes(pageDeps));
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
