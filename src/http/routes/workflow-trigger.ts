/**
 * `POST /v2/trigger/{workflowUrl}` (docs/hosted-api.md §13.1, docs/workflow-protocol.md
 * §3.4): starts a workflow run for a client without a workflow SDK.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { llmUrl } from "../../config/config";
import type { Dialect } from "../../domain/headers/dialect";
import { messageSettings } from "../../domain/publish/options";
import { triggerRun } from "../../domain/workflows/trigger";
import { bodyOf } from "../body";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { PUBLISH_HEADER_NOTE, publishHeaders } from "../openapi/parameters";
import { callerIp, rawDestination, requestHeaders } from "../request";

const TRIGGER = operation({
  summary: "Start a workflow run",
  description: `Calls the workflow at the URL with the body as the run's input. Headers configure the run as publish headers do (here \`Upstash-\` unless \`Svc-\` ones are given); \`Svc-Workflow-RunId\` chooses the run's id.\n${PUBLISH_HEADER_NOTE}`,
  tag: "Workflows",
  path: { destination: "The workflow's URL, as is." },
  headers: publishHeaders(),
  body: { bytes: "The run's input." },
  responses: {
    200: {
      description: "The run.",
      json: v.object({ workflowRunId: v.string(), workflowCreatedAt: v.number(), deduplicated: v.optional(v.boolean()) }),
    },
  },
  errors: [409, 412, 413],
});

/** The trigger route, mounted at `/v2`. */
export function workflowTriggerRoutes(deps: AppDeps) {
  const settings = { ...messageSettings(deps.config), llmUrl: llmUrl(deps.config) };
  return new Hono().post("/trigger/*", TRIGGER.describe, async (c) => {
    const { headers } = requestHeaders(c);
    // A trigger targets a workflow SDK: compat headers unless native ones are given.
    const dialect: Dialect = Object.keys(headers).some((name) => name.startsWith("svc-")) ? "svc" : "upstash";
    const request = {
      workflowUrl: rawDestination(c, "/v2/trigger/"),
      headers,
      dialect,
      body: bodyOf(c, deps.config.maxMessageBytes),
      callerIp: callerIp(c),
    };
    const run = await deps.sql.begin((tx) => triggerRun(tx, request, settings));
    return c.json({
      workflowRunId: run.workflowRunId,
      workflowCreatedAt: run.workflowCreatedAt,
      ...(run.deduplicated && { deduplicated: true }),
    });
  });
}
