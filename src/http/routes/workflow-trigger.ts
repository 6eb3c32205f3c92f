/**
 * `POST /v2/trigger/{workflowUrl}` (docs/hosted-api.md §13.1, docs/workflow-protocol.md
 * §3.4): starts a workflow run for a client without a workflow SDK.
 */
import { Hono } from "hono";
import { llmUrl } from "../../config/config";
import type { Dialect } from "../../domain/headers/dialect";
import { messageSettings } from "../../domain/publish/options";
import { triggerRun } from "../../domain/workflows/trigger";
import { bodyOf } from "../body";
import type { AppDeps } from "../deps";
import { callerIp, rawDestination, requestHeaders } from "../request";

/** The trigger route, mounted at `/v2`. */
export function workflowTriggerRoutes(deps: AppDeps) {
  const settings = { ...messageSettings(deps.config), llmUrl: llmUrl(deps.config) };
  return new Hono().post("/trigger/*", async (c) => {
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
