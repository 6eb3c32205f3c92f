/**
 * `POST /v2/trigger/{workflowUrl}` and `POST /v2/batch/trigger`
 * (docs/hosted-api.md §13.1, docs/workflow-protocol.md §3.4): start workflow
 * runs for a client without a workflow SDK, one or several at once.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { overLimit, tooLarge } from "../../domain/errors";
import type { Dialect } from "../../db/vocabulary";
import type { JsonPath } from "../../domain/storable-text";
import { type TriggeredRun, type TriggerRequest, triggerRun, triggerRuns } from "../../domain/workflows/trigger";
import { bodyOf, jsonOf } from "../body";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { PUBLISH_HEADER_NOTE, publishHeaders } from "../openapi/parameters";
import { callerIp, rawDestination, requestHeaders } from "../request";
import { publishSettings } from "../publish-settings";
import { destinationAttributes, tracedRequest } from "../request-span";

/** Runs per batch trigger, as for a publish batch (docs/hosted-api.md §13.1). */
const MAX_BATCH_ITEMS = 1000;

const RUN_ID = v.pipe(v.string(), v.description("The run's id."));
const CREATED_AT = v.pipe(v.number(), v.description("The run's creation, Unix milliseconds."));
const DEDUPLICATED = v.pipe(v.boolean(), v.description("A run with this id was already active: no new run was started."));

const BatchTriggerSchema = v.pipe(
  v.array(
    v.object({
      destination: v.string(),
      // The run's input as raw text; a JSON value is taken as its JSON text, as the publish batch takes it.
      body: v.optional(v.pipe(v.unknown(), v.transform((body) => (typeof body === "string" ? body : JSON.stringify(body) ?? ""))), ""),
      headers: v.optional(v.record(v.string(), v.string()), {}),
    }),
    "the body must be a JSON array of {destination, body?, headers?}",
  ),
  v.minLength(1, "a batch trigger needs at least one item"),
);

/** An item's body is the run's input: bytes, which may hold anything (the rest must be storable text). */
const isItemBody = (path: JsonPath) => path.length === 2 && path[1] === "body";

const TRIGGER = operation({
  summary: "Start a workflow run",
  description: `Calls the workflow at the URL with the body as the run's input. Headers configure the run as publish headers do (here \`Upstash-\` unless \`Svc-\` ones are given); \`Svc-Workflow-RunId\` chooses the run's id.\n${PUBLISH_HEADER_NOTE}`,
  tag: "Workflows",
  access: "full-token",
  path: { destination: "The workflow's URL, as is." },
  headers: [
    ...publishHeaders(),
    {
      name: "Svc-Workflow-Unknown-Sdk",
      description:
        "`true`: the first delivery is the unknown-SDK probe (`Upstash-Workflow-Unknown-Sdk: true`), which a v1 workflow SDK answers by publishing the run's init itself (docs/workflow-protocol.md §3.4). Without it the init is delivered as the v1 SDK's own trigger publishes it.",
    },
  ],
  body: { bytes: "The run's input." },
  responses: {
    200: {
      description: "The run.",
      json: v.object({ workflowRunId: RUN_ID, workflowCreatedAt: CREATED_AT, deduplicated: v.optional(DEDUPLICATED) }),
    },
  },
  errors: [409, 412, 413],
});
const BATCH_TRIGGER = operation({
  summary: "Start several workflow runs",
  description: `Up to ${MAX_BATCH_ITEMS} runs at once, each as \`POST /v2/trigger/{destination}\` with its \`headers\` (the trigger's headers, \`Upstash-Workflow-Unknown-Sdk\` included; \`Upstash-\` unless \`Svc-\` ones are given) and \`body\` (the run's input); all start or none.`,
  tag: "Workflows",
  access: "full-token",
  body: { name: "batch trigger", json: BatchTriggerSchema, isBytes: isItemBody },
  responses: {
    201: {
      description: "One run per item, in order.",
      json: v.array(v.object({ workflowRunId: RUN_ID, workflowCreatedAt: CREATED_AT, deduplicated: DEDUPLICATED })),
    },
  },
  errors: [409, 412, 413],
});

/** The trigger routes, mounted at `/v2`. */
export function workflowTriggerRoutes(deps: AppDeps) {
  const settings = publishSettings(deps);
  return new Hono()
    .post("/trigger/*", TRIGGER.describe, async (c) => {
      const { headers } = requestHeaders(c);
      const request = {
        workflowUrl: rawDestination(c, "/v2/trigger/"),
        headers,
        dialect: triggerDialect(headers),
        body: bodyOf(c, deps.config.maxMessageBytes),
        callerIp: callerIp(c),
        project: c.get("project"),
      };
      const span = { name: "trigger", attributes: destinationAttributes(request.workflowUrl), made: (run: TriggeredRun) => ({ "dispatch.workflow_run_id": run.workflowRunId }) };
      const run = await tracedRequest(deps.tracing, c, span, (traceparent) => deps.sql.begin((tx) => triggerRun(tx, { ...request, traceparent }, settings)));
      return c.json({
        workflowRunId: run.workflowRunId,
        workflowCreatedAt: run.workflowCreatedAt,
        ...(run.deduplicated && { deduplicated: true }),
      });
    })
    .post("/batch/trigger", BATCH_TRIGGER.describe, async (c) => {
      const requests = batchRequests(c, deps.config.maxMessageBytes);
      const span = { name: "trigger", attributes: { "messaging.batch.message_count": requests.length }, made: (runs: TriggeredRun[]) => ({ "dispatch.run_count": runs.length }) };
      const runs = await tracedRequest(deps.tracing, c, span, (traceparent) =>
        deps.sql.begin((tx) => triggerRuns(tx, requests.map((request) => ({ ...request, traceparent })), settings)),
      );
      return c.json(runs, 201);
    });
}

/** A trigger targets a workflow SDK: compat headers unless native ones are given. */
function triggerDialect(headers: Record<string, string>): Dialect {
  return Object.keys(headers).some((name) => name.startsWith("svc-")) ? "svc" : "upstash";
}

/** The items of a batch trigger as single triggers: at most 1000, each body within the message size limit. */
function batchRequests(c: Context, maxBytes: number): TriggerRequest[] {
  const json = jsonOf(c, isItemBody);
  if (Array.isArray(json) && json.length > MAX_BATCH_ITEMS) {
    throw overLimit(`a batch trigger holds at most ${MAX_BATCH_ITEMS} items, got ${json.length}`, null);
  }
  const ip = callerIp(c);
  return BATCH_TRIGGER.body(c, json).map((item) => {
    const body = Buffer.from(item.body);
    if (body.length > maxBytes) throw tooLarge("a batch trigger item body", maxBytes);
    const headers = Object.fromEntries(Object.entries(item.headers).map(([name, value]) => [name.toLowerCase(), value]));
    return { workflowUrl: item.destination, headers, dialect: triggerDialect(headers), body, callerIp: ip, project: c.get("project") };
  });
}
