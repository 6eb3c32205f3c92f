/**
 * Starting runs without an SDK: `POST /v2/trigger/{workflowUrl}` and `POST
 * /v2/batch/trigger` (docs/workflow-protocol.md §3.4, docs/hosted-api.md
 * §13.1). Dispatch writes the init message the SDK's `client.trigger` would
 * publish (§3.1) and publishes it like any other, so the run is created by
 * the normal binding. Bare § numbers in this file are docs/workflow-protocol.md's.
 */
import type { Tx } from "../../db/client";
import { badRequest } from "../errors";
import { PREFIX } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import { randomBase58 } from "../ids";
import { insertMessages } from "../publish/insert";
import { prepareMessages, type PublishSettings } from "../publish/prepare";

/** The feature set the SDK's trigger announces (§2.4); runs triggered over REST get the same. */
export const SDK_FEATURE_SET = "LazyFetch,InitialBody,WF_DetectTrigger,WF_TriggerOnConfig";

/** A fresh run id, shaped like the SDK's (`wfr_` and 21 random characters). */
export const newRunId = () => `wfr_${randomBase58(21)}`;

/** Run configuration headers a trigger request may carry (after the dialect prefix). */
const CONFIG_HEADERS = [
  "retries", "retry-delay", "delay", "not-before", "label", "flow-control-key", "flow-control-value", "timeout",
  "redact-fields",
];

/** Config headers the failure callback mirrors from the run (§3.1). */
const MIRRORED = ["retries", "retry-delay", "flow-control-key", "flow-control-value"];

/** What identifies the run a failure callback belongs to. */
export interface FailureCallbackRun {
  runId: string;
  workflowUrl: string;
  /** Forwarded user headers (names without prefix) the failure function receives too. */
  userHeaders: Record<string, string>;
  /** Run configuration (names after the prefix, e.g. `retries`) the failure callback mirrors. */
  config: Record<string, string>;
}

/**
 * Publish headers (lower-case, `<p>failure-callback-…`) that make a failure
 * callback a `failureCall` message of its run, as the SDK's trigger sends
 * them (§3.1); the failure callback URL itself is not among them.
 */
export function failureCallbackHeaders(dialect: Dialect, run: FailureCallbackRun): Record<string, string> {
  const p = PREFIX[dialect].toLowerCase();
  const f = `${p}failure-callback-`;
  const headers: Record<string, string> = {
    [`${f}forward-${p}workflow-is-failure`]: "true",
    [`${f}forward-${p}workflow-failure-callback`]: "true",
    [`${f}workflow-runid`]: run.runId,
    [`${f}workflow-url`]: run.workflowUrl,
    [`${f}workflow-init`]: "false",
    [`${f}workflow-calltype`]: "failureCall",
    [`${f}feature-set`]: SDK_FEATURE_SET,
  };
  for (const [name, value] of Object.entries(run.userHeaders)) {
    // Protocol headers (the SDK version above all) must not reach the failure function (§4.3).
    if (!/^(upstash|svc)-workflow-/i.test(name)) headers[`${f}forward-${name.toLowerCase()}`] = value;
  }
  for (const name of MIRRORED) if (run.config[name] !== undefined) headers[f + name] = run.config[name]!;
  return headers;
}

/**
 * Whether a trigger asks for the unknown-SDK probe (§3.4): its request (not a
 * forwarded header) carries `Upstash-Workflow-Unknown-Sdk: true`.
 */
function wantsProbe(request: Record<string, string>, dialect: Dialect): boolean {
  return request[`${PREFIX[dialect].toLowerCase()}workflow-unknown-sdk`]?.trim().toLowerCase() === "true";
}

/**
 * The init message's publish headers for a REST trigger of `workflowUrl`:
 * the request's forwarded headers and run configuration, the workflow
 * protocol headers, and a failure callback (the workflow URL unless the
 * request names another). A trigger that asks for the probe gets an init
 * forwarding `Upstash-Workflow-Unknown-Sdk: true`, so that its deliveries are
 * the probe; the header is the init's own, not the run's (§3.4, §4.3).
 */
export function triggerHeaders(
  request: Record<string, string>,
  dialect: Dialect,
  workflowUrl: string,
): { runId: string; headers: Record<string, string> } {
  const p = PREFIX[dialect].toLowerCase();
  const runId = request[`${p}workflow-runid`]?.trim() || newRunId();
  const headers: Record<string, string> = {};
  const userHeaders: Record<string, string> = {};
  const config: Record<string, string> = {};
  for (const [name, value] of Object.entries(request)) {
    if (name === "content-type") headers[name] = value;
    else if (name.startsWith(`${p}failure-callback-forward-`)) headers[name] = value;
    else if (name.startsWith(`${p}forward-`)) {
      headers[name] = value;
      userHeaders[name.slice(`${p}forward-`.length)] = value;
    } else if (CONFIG_HEADERS.some((config) => name === p + config)) {
      headers[name] = value;
      config[name.slice(p.length)] = value;
    }
  }
  // `context.label` reads the forwarded copy; the raw header labels the run (§2.1).
  if (config.label !== undefined) userHeaders[`${p}label`] ??= config.label;
  for (const [name, value] of Object.entries(userHeaders)) headers[`${p}forward-${name}`] = value;
  Object.assign(headers, failureCallbackHeaders(dialect, { runId, workflowUrl, userHeaders, config }), {
    [`${p}failure-callback`]: request[`${p}failure-callback`]?.trim() || workflowUrl,
    [`${p}workflow-init`]: "true",
    [`${p}workflow-runid`]: runId,
    [`${p}workflow-url`]: workflowUrl,
    [`${p}feature-set`]: SDK_FEATURE_SET,
    [`${p}workflow-sdk-version`]: "1",
    [`${p}forward-${p}workflow-sdk-version`]: "1",
    [`${p}method`]: "POST",
  });
  if (wantsProbe(request, dialect)) headers[`${p}forward-${p}workflow-unknown-sdk`] = "true";
  headers["content-type"] ??= "application/json";
  return { runId, headers };
}

/** A REST trigger as the HTTP layer hands it over. */
export interface TriggerRequest {
  /** The project the run and its messages belong to. */
  project: string;
  workflowUrl: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  dialect: Dialect;
  body: Buffer;
  callerIp: string | null;
  /** The trace its init message's attempts join (observability/tracing.ts); none when tracing is off. */
  traceparent?: string | null;
}

/** The started run; `deduplicated` when a run with the id was already active (§3.5 rule 2). */
export interface TriggeredRun {
  workflowRunId: string;
  workflowCreatedAt: number;
  deduplicated: boolean;
}

/**
 * Publishes the init message of a REST trigger. Its first delivery must be
 * answered by a v1 SDK, or the run fails (§3.4); asked for, that delivery is
 * the unknown-SDK probe, which the SDK answers by re-publishing the init
 * (binding.ts replaces the placeholder with it).
 */
export async function triggerRun(tx: Tx, request: TriggerRequest, settings: PublishSettings): Promise<TriggeredRun> {
  if (!/^https?:\/\//i.test(request.workflowUrl)) {
    throw badRequest(`invalid workflow url "${request.workflowUrl}": use a URL starting with http:// or https://`);
  }
  const { runId, headers } = triggerHeaders(request.headers, request.dialect, request.workflowUrl);
  const { messages } = await prepareMessages(
    tx,
    {
      project: request.project,
      destination: request.workflowUrl,
      headers,
      body: request.body,
      queueName: null,
      callerIp: request.callerIp,
      traceparent: request.traceparent ?? null,
    },
    settings,
  );
  const [result] = await insertMessages(tx, messages, settings);
  const pk = messages[0]!.workflowRunPk;
  // Its first delivery must be answered by a v1 SDK (detectNonWorkflowDestination).
  if (pk !== undefined) await tx`update dispatch.workflow_runs set config = config || '{"restTrigger": true}' where pk = ${pk}`;
  const [run] = await tx<{ createdAt: Date }[]>`
    select created_at as "createdAt" from dispatch.workflow_runs
    where ${pk === undefined ? tx`project = ${request.project} and run_id = ${runId} and state = 'RUN_STARTED'` : tx`pk = ${pk}`}`;
  return { workflowRunId: runId, workflowCreatedAt: run!.createdAt.getTime(), deduplicated: result!.deduplicated };
}

/**
 * Publishes the init messages of several REST triggers, in order, in the
 * caller's transaction: all runs start or none. A run id given twice starts
 * one run; the later trigger is deduplicated (§3.5 rule 2).
 */
export async function triggerRuns(tx: Tx, requests: TriggerRequest[], settings: PublishSettings): Promise<TriggeredRun[]> {
  const runs: TriggeredRun[] = [];
  for (const request of requests) runs.push(await triggerRun(tx, request, settings));
  return runs;
}
