/**
 * `createApp(deps)`: the HTTP API as a Hono app, one sub-app per resource.
 * Every /v2 route needs a token (a read-only one reads only); errors are `{"error": "..."}`; parameters
 * and headers that are not storable text are refused before any route runs. Every route is an
 * operation of the API document (`/openapi.json`, `/docs`; http/openapi/).
 */
import { type ErrorHandler, Hono } from "hono";
import { fixedTokenSet, withReadOnly } from "../../domain/access-tokens/token-set";
import { readBody } from "../body";
import { dashboard } from "../dashboard/app/dashboard";
import { checkAnswers } from "../openapi/answer-check";
import { dashboardErrorPage, errorPage } from "../dashboard/shell/errors";
import type { AppDeps } from "../deps";
import { apiDocumentRoutes } from "../routes/api-document";
import { destinationRoutes } from "../routes/destinations";
import { dlqRoutes } from "../routes/dlq";
import { echoRoutes } from "../routes/echo";
import { flowControlRoutes } from "../routes/flow-control";
import { healthRoutes } from "../routes/health";
import { keyRoutes } from "../routes/keys";
import { logRoutes } from "../routes/logs";
import { messageRoutes } from "../routes/messages";
import { metricsRoutes } from "../routes/metrics";
import { publishRoutes } from "../routes/publish";
import { queueRoutes } from "../routes/queues";
import { scheduleRoutes } from "../routes/schedules";
import { urlGroupRoutes } from "../routes/url-groups";
import { workflowDlqHandOff, workflowDlqRoutes } from "../routes/workflow-dlq";
import { workflowEventRoutes, workflowHookRoutes } from "../routes/workflow-events";
import { workflowLogRoutes } from "../routes/workflow-logs";
import { workflowRunRoutes } from "../routes/workflow-runs";
import { workflowTriggerRoutes } from "../routes/workflow-trigger";
import { projectRoutes } from "../routes/projects";
import { renderError } from "./errors";
import { AuthFailures } from "../auth-failures";
import { everyRequest } from "./every-request";
import { requireToken } from "./middleware";

const isDashboard = (path: string) => path === "/dashboard" || path.startsWith("/dashboard/");

/** Builds the API over its dependencies. */
export function createApp(deps: AppDeps) {
  // Failed authentication, throttled per address: the API's 401s and the dashboard's refused sign-ins.
  const failures = new AuthFailures(deps.config.authFailureLimit);
  const ui = dashboard(deps, failures);
  const v2 = new Hono()
    .use(requireToken(deps.acceptedTokens, failures))
    // The outer bound (a batch); publishing routes apply the message size limit themselves.
    .use(readBody(deps.config.maxMessageBytes * 10))
    .route("/", publishRoutes(deps))
    .route("/messages", messageRoutes(deps))
    .route("/queues", queueRoutes(deps))
    .route("/topics", urlGroupRoutes(deps))
    .route("/schedules", scheduleRoutes(deps))
    .route("/", flowControlRoutes(deps))
    .route("/destinations", destinationRoutes(deps))
    // `GET /v2/dlq?source=workflow` is the workflow DLQ (docs/workflow-protocol.md §11); the rest is the plain DLQ.
    .route("/dlq", workflowDlqHandOff(deps))
    .route("/dlq", dlqRoutes(deps))
    .route("/", logRoutes(deps))
    .route("/", keyRoutes(deps))
    .route("/workflows/runs", workflowRunRoutes(deps))
    .route("/workflows/dlq", workflowDlqRoutes(deps))
    .route("/", workflowTriggerRoutes(deps))
    .route("/workflows", workflowLogRoutes(deps))
    .route("/", workflowEventRoutes(deps));

  // The dashboard is a set of pages: its errors are pages too.
  const answerError: ErrorHandler = (error, c) =>
    isDashboard(c.req.path) ? dashboardErrorPage(renderError(error, c, deps), c, ui.frame) : renderError(error, c, deps);
  const app: Hono = new Hono({ strict: false });
  // Development and the tests only: a middleware less on every request otherwise. Outermost, it sees every answer.
  if (deps.config.checkAnswers) app.use(checkAnswers(deps.log));
  app
    // Before every route, in one pass: the request's id; no path or query parameter or header that Postgres cannot
    // store gets further; pages get the browsers' protections (a strict CSP, no framing, no caching of the
    // dashboard), the rest nosniff; the duration measured and logged.
    .use(everyRequest(deps, answerError))
    .route("/health", healthRoutes(deps))
    .route("/echo", deps.echo ? echoRoutes(deps) : new Hono())
    // Any access token reads the metrics, and so does DISPATCH_METRICS_TOKEN, which is good for nothing else.
    .use("/metrics", requireToken(withReadOnly(deps.acceptedTokens, deps.config.metricsToken ? [deps.config.metricsToken] : []), failures))
    .route("/metrics", metricsRoutes(deps))
    // Webhooks of waiting runs are called by third parties without a token (docs/workflow-protocol.md §7.5).
    .use("/v2/workflows/hooks/*", readBody(deps.config.maxMessageBytes))
    .route("/v2/workflows/hooks", workflowHookRoutes(deps))
    .route("/v2", v2)
    // The projects' administration answers DISPATCH_ADMIN_TOKEN and no other token (none when it is unset).
    .use("/admin/*", requireToken(fixedTokenSet(deps.config.adminToken ? [deps.config.adminToken] : [], []), failures))
    .route("/admin/projects", projectRoutes(deps))
    // The API document and its reference page, built from the operations of the routes above.
    .route("/", apiDocumentRoutes(() => app.routes))
    // The dashboard, whose 404s are pages too.
    .get("/", (c) => c.redirect("/dashboard", 302))
    .route("/dashboard", ui.routes)
    .notFound((c) =>
      isDashboard(c.req.path)
        ? errorPage(c, ui.frame, 404, `no page at ${c.req.path}`)
        : c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404),
    )
    .onError(answerError);
  return app;
}

/** The first segment after `/v2/` of every resource, by its lower-case form. */
const RESOURCES = new Map(
  ["publish", "enqueue", "batch", "messages", "topics", "queues", "schedules", "flowControl", "globalParallelism", "dlq", "events",
    "logs", "keys", "rotate", "workflows", "trigger", "wait", "notify", "waiters", "destinations"].map((name) => [name.toLowerCase(), name]),
);

/**
 * `fetch` with the resource segment of `/v2/...` paths matched without regard
 * to case: the Go client sends `/v2/Schedules/...` for two of its calls
 * (docs/hosted-api.md §7). Only such a path is rewritten; every other request
 * goes through untouched.
 */
export function withResourceCase<E>(fetch: (request: Request, env: E) => Response | Promise<Response>) {
  return (request: Request, env: E) => {
    const match = /^(https?:\/\/[^/]+\/v2\/)([^/?]+)(.*)$/s.exec(request.url);
    const canonical = match && match[2]!.toLowerCase() !== match[2] ? RESOURCES.get(match[2]!.toLowerCase()) : undefined;
    if (canonical === undefined || canonical === match![2]) return fetch(request, env);
    return fetch(new Request(`${match![1]}${canonical}${match![3]}`, request), env);
  };
}
