/**
 * Events of workflow runs (docs/workflow-protocol.md §7): wait, notify (plain and
 * lookback by run id), waiters, and the webhook endpoint a run waits on.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { beginRetryingDeadlocks } from "../../db/deadlocks";
import { AppError } from "../../domain/errors";
import { canonicalHeaders } from "../../domain/headers/names";
import { messageSettings } from "../../domain/publish/options";
import { listWaiters, notify, registerWait } from "../../domain/workflows/waits";
import { bodyOf } from "../body";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { headerMap } from "../openapi/schemas";
import { requestHeaders } from "../request";

const EVENT_ID = "The event's id.";
const WAITER = v.object({
  url: v.pipe(v.string(), v.description("Where a notify sends the continuation.")),
  deadline: v.pipe(v.number(), v.description("When the wait times out, Unix seconds.")),
  headers: v.pipe(headerMap, v.description("The headers of the continuation a notify sends.")),
  timeoutUrl: v.optional(v.pipe(v.string(), v.description("Where the timeout sends its continuation."))),
  timeoutBody: v.optional(v.pipe(v.string(), v.description("The wait request's timeoutBody, as given; absent when it gave none (the SDK never does)."))),
  timeoutHeaders: v.optional(v.pipe(headerMap, v.description("The headers of the timeout's continuation."))),
});
const NOTIFIED = {
  description: "One item per waiting step resumed.",
  json: v.array(
    v.object({
      waiter: WAITER,
      messageId: v.pipe(v.string(), v.description("The continuation's message.")),
      deduplicated: v.pipe(v.boolean(), v.description("Whether the continuation was a duplicate (never, as Dispatch makes it).")),
      error: v.pipe(v.string(), v.description("Empty when the run was resumed; else why not (its run had ended: the event is only in its step list).")),
      workflowRunId: v.string(),
      workflowCreatedAt: v.pipe(v.number(), v.description("The run's creation, Unix milliseconds.")),
    }),
  ),
};

const WAIT = operation({
  summary: "Wait for an event (workflow SDK)",
  description: "Registers a run's step as waiting for the event; a notify resumes it, else it is resumed at its timeout.",
  tag: "Workflows",
  access: "full-token",
  path: { eventId: EVENT_ID },
  body: {
    name: "wait request",
    json: v.object({
      url: v.pipe(v.string(), v.regex(/^https?:\/\//i, "url must be an http(s) URL")),
      timeout: v.optional(v.string()),
      timeoutUrl: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\//i, "timeoutUrl must be an http(s) URL"))),
      timeoutBody: v.optional(v.string()),
      timeoutHeaders: v.optional(v.record(v.string(), v.union([v.string(), v.array(v.string())]))),
      step: v.record(v.string(), v.unknown()),
    }),
  },
  responses: { 200: { description: "Waiting.", json: v.object({}) } },
  errors: [412],
});
const NOTIFY = operation({
  summary: "Notify an event",
  description: "Resumes every step waiting for the event with the body as its data.",
  tag: "Workflows",
  access: "full-token",
  path: { eventId: EVENT_ID },
  body: { bytes: "The event's data." },
  responses: { 200: NOTIFIED },
  errors: [413],
});
const NOTIFY_RUN = operation({
  summary: "Notify an event of one run",
  description: "As notify, for one run; an event that comes before its wait is kept for the wait to find (lookback).",
  tag: "Workflows",
  access: "full-token",
  path: { runId: "The run's id.", eventId: EVENT_ID },
  body: { bytes: "The event's data." },
  responses: { 200: NOTIFIED },
  errors: [404, 413, 429],
});
const WAITERS = operation({
  summary: "List the steps waiting for an event",
  tag: "Workflows",
  access: "read",
  path: { eventId: EVENT_ID },
  responses: { 200: { description: "The waiting steps, oldest first.", json: v.array(WAITER) } },
});
const HOOK = operation({
  summary: "Webhook of a waiting run",
  description: "Called by third parties without a token: notifies the run's event with the request (method, headers, body) as its data.",
  tag: "Workflows",
  access: "public",
  methods: ["get", "post", "put", "patch", "delete"],
  path: { userId: "The UserID of one of the service's tokens.", runId: "The run's id.", eventId: EVENT_ID },
  body: { bytes: "Any body; it is part of the event's data." },
  responses: { 200: { description: "Notified.", json: v.object({}) } },
  errors: [404, 413, 429],
});


/** Authenticated routes: wait, notify, waiters. */
export function workflowEventRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  const notifyRoute = async (project: string, eventId: string, runId: string | null, body: Buffer) =>
    beginRetryingDeadlocks(deps.sql, (tx) => notify(tx, project, eventId, body, runId, settings));
  return new Hono()
    .post("/wait/:eventId", WAIT.describe, async (c) => {
      const request = WAIT.body(c);
      const { headers, dialect } = requestHeaders(c);
      await deps.sql.begin((tx) => registerWait(tx, c.get("project"), c.req.param("eventId"), request, headers, dialect, settings));
      return c.json({});
    })
    .post("/notify/:eventId", NOTIFY.describe, async (c) =>
      c.json(await notifyRoute(c.get("project"), c.req.param("eventId"), null, bodyOf(c, deps.config.maxMessageBytes))),
    )
    .post("/notify/:runId/:eventId", NOTIFY_RUN.describe, async (c) =>
      c.json(await notifyRoute(c.get("project"), c.req.param("eventId"), c.req.param("runId"), bodyOf(c, deps.config.maxMessageBytes))),
    )
    .get("/waiters/:eventId", WAITERS.describe, async (c) => c.json(await listWaiters(deps.sql, c.get("project"), c.req.param("eventId"))));
}

/**
 * `/v2/workflows/hooks/{userId}/{runId}/{eventId}` (§7.5): unauthenticated,
 * any method; a lookback notify whose event data describes the request. The
 * user id must be the `UserID` of a full token the service accepts (asked at
 * each request: a created token's hooks answer at once, a revoked one's 404).
 * The notify reaches the runs of the project the user id's token belongs to.
 */
export function workflowHookRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  return new Hono().all("/:userId/:runId/:eventId", HOOK.describe, async (c) => {
    const project = deps.acceptedTokens.current().webhookUserIds.get(c.req.param("userId"));
    if (project === undefined) throw new AppError(404, "unknown webhook");
    const url = new URL(c.req.url);
    const body = bodyOf(c, deps.config.maxMessageBytes);
    const event = {
      method: c.req.method,
      header: canonicalHeaders(c.req.header()),
      body: body.toString("base64"),
      proto: c.req.header("x-forwarded-proto") ?? url.protocol.replace(":", ""),
      host: c.req.header("x-forwarded-host") ?? c.req.header("host") ?? url.host,
      url: `${url.pathname}${url.search}`,
    };
    const data = Buffer.from(JSON.stringify(event));
    await beginRetryingDeadlocks(deps.sql, (tx) => notify(tx, project, c.req.param("eventId"), data, c.req.param("runId"), settings));
    return c.json({});
  });
}
