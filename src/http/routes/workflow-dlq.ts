/**
 * The workflow DLQ (docs/workflow-protocol.md §11, §13; docs/hosted-api.md §13.4;
 * docs/interface.md "POST /v2/workflows/dlq/resume"): list, read and delete the
 * entries of failed runs; resume or restart their runs as new runs; retry a
 * failed failure function, or cancel one under way. The SDK lists through
 * `GET /v2/dlq?source=workflow`, which `workflowDlqHandOff` takes over from
 * the plain DLQ.
 */
import { redactorFor } from "../redactor-for";
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { badRequest } from "../../domain/errors";
import { canonicalHeaders } from "../../domain/headers/names";
import type { Redactor } from "../../domain/messages/redaction";
import { messageSettings } from "../../domain/publish/options";
import {
  deleteWorkflowDlq,
  findWorkflowDlqEntry,
  listWorkflowDlq,
  type WorkflowDlqEntry,
  type WorkflowDlqSelection,
} from "../../domain/workflows/dlq/dlq";
import { cancelFailureFunction, retryFailureFunction } from "../../domain/workflows/dlq/failure-function";
import { type NewRunMode, newRunsFromDlq, newRunFromDlqEntry } from "../../domain/workflows/dlq/resume";
import { readRunOverrides } from "../../domain/workflows/dlq/run-overrides";
import { FAILURE_FUNCTION_STATES } from "../../domain/workflows/failure-function-state";
import type { AppDeps } from "../deps";
import { type Operation, operation, type ParameterDoc } from "../openapi/operation";
import { paging, TIME_RANGE } from "../openapi/parameters";
import { DlqMessageSchema, headerMap, pageOf } from "../openapi/schemas";
import { integerParam, listParam, type Params, singleParam, timeRangeParams } from "../query";
import { requestHeaders } from "../request";
import { bodyFields } from "../serialize";
import { messageJson } from "./messages";

/** Page size of the list and bulk delete: default and maximum (docs/hosted-api.md §13.4). */
const MAX_COUNT = 100;
/** Runs per bulk resume or restart (docs/interface.md "Limits"); a larger `count` is capped. */
const MAX_RESTARTS = 50;

const MULTI = "Several: repeat the parameter or join them with commas.";
const FILTERS: Record<string, ParameterDoc> = {
  ...TIME_RANGE,
  workflowUrl: "Workflow URLs (exact). Repeat the parameter for several.",
  url: "Alias of workflowUrl.",
  workflowRunId: `Run ids (bulk resume and restart: id prefixes too). ${MULTI}`,
  workflowCreatedAt: `Run creation times, Unix milliseconds. ${MULTI}`,
  label: `Labels. ${MULTI}`,
  failureFunctionState: `${FAILURE_FUNCTION_STATES.join(", ")}. ${MULTI}`,
  callerIp: `IP addresses of the clients that started the runs. ${MULTI}`,
  callerIP: "Alias of callerIp.",
  flowControlKey: `Flow-control keys. ${MULTI}`,
  responseStatus: `Status codes of the last answer. ${MULTI}`,
};
const LIST_PARAMETERS = { ...paging(MAX_COUNT, MAX_COUNT), ...FILTERS };
const ACTION_PARAMETERS = { dlqIds: `DLQ ids; the filters are then ignored. ${MULTI}`, ...LIST_PARAMETERS };
const FILTER_BODY = { filters: "The parameters as a JSON object, as older SDKs send them (`{\"dlqIds\": [...]}`)." };
const DLQ_ID = { dlqId: "The entry's id." };
const FAILURE_FUNCTION_STATE = v.pipe(v.picklist(FAILURE_FUNCTION_STATES), v.description("The failure function's state."));
const WORKFLOW_DLQ_MESSAGE = v.object({
  ...DlqMessageSchema.entries,
  workflowRunId: v.string(),
  workflowCreatedAt: v.pipe(v.number(), v.description("The run's creation, Unix milliseconds.")),
  workflowUrl: v.string(),
  failureCallbackInfo: v.optional(
    v.pipe(
      v.object({
        state: v.optional(FAILURE_FUNCTION_STATE),
        responseStatus: v.optional(v.number()),
        responseBody: v.optional(v.string()),
        responseHeaders: v.optional(headerMap),
      }),
      v.description("The failure function's call: its state and, once it answered, its final response."),
    ),
  ),
  failureFunctionState: v.optional(FAILURE_FUNCTION_STATE),
});
const NEW_RUN = v.object({ workflowRunId: v.string(), workflowCreatedAt: v.pipe(v.number(), v.description("Unix milliseconds.")) });
const OVERRIDE_HEADERS = [
  { name: "Svc-Retries", description: "Retries of the new run's steps." },
  { name: "Svc-Retry-Delay", description: "Retry delay expression of the new run." },
  { name: "Svc-Flow-Control-Key", description: "Flow-control key of the new run." },
  { name: "Svc-Flow-Control-Value", description: "Flow-control limits of the new run." },
  { name: "Svc-Delay", description: "Delay before the new run's first step." },
  { name: "Svc-Label", description: "Label of the new run." },
  { name: "Svc-Failure-Callback", description: "Failure callback of the new run." },
];

/** Resume (from the failed step, keeping the steps done) or restart (from the start): one entry or many. */
function newRunOperation(mode: NewRunMode, many: boolean) {
  const what = mode === "resume" ? "Resume" : "Restart";
  const how = mode === "resume" ? "continues from the failed step, keeping the results of the steps before it" : "starts again from the first step";
  return operation({
    summary: `${what} ${many ? "failed runs" : "a failed run"}`,
    description: `Each entry's run ${how}, as a new run; the entry leaves the DLQ. Headers here override the original run's settings (also with the \`Upstash-\` prefix).${many ? ` At most ${MAX_RESTARTS} entries per call; the cursor continues.` : ""}`,
    tag: "Workflows",
    access: "full-token",
    ...(many ? { query: ACTION_PARAMETERS, body: FILTER_BODY } : { path: DLQ_ID }),
    headers: OVERRIDE_HEADERS,
    responses: many
      ? { 200: { description: "The new runs.", json: v.object({ workflowRuns: v.array(NEW_RUN), cursor: v.optional(v.string()) }) } }
      : { 200: { description: "The new run.", json: NEW_RUN } },
    errors: many ? [412] : [404, 412],
  });
}

const LIST = operation({
  summary: "List the workflow DLQ",
  description: "Failed workflow runs, each with its failed step's last answer. `GET /v2/dlq?source=workflow` lists the same (what the SDK calls).",
  tag: "Workflows",
  access: "read",
  query: LIST_PARAMETERS,
  responses: { 200: { description: "A page of entries.", json: pageOf("messages", WORKFLOW_DLQ_MESSAGE) } },
});
/** The SDK's list (`GET /v2/dlq?source=workflow`); the plain DLQ answers any other `GET /v2/dlq`, after this route. */
const LIST_FOR_SDK = operation({ ...LIST.spec, query: { ...LIST_PARAMETERS, source: "`workflow`." } });
const DELETE_MANY = operation({
  summary: "Delete workflow DLQ entries",
  description: "The entries given by id, else a page of those matching the filters.",
  tag: "Workflows",
  access: "full-token",
  query: ACTION_PARAMETERS,
  body: FILTER_BODY,
  responses: { 200: { description: "How many were deleted.", json: v.object({ deleted: v.number(), cursor: v.optional(v.string()) }) } },
});
const RESUME_MANY = newRunOperation("resume", true);
const RESUME = newRunOperation("resume", false);
const RESTART_MANY = newRunOperation("restart", true);
const RESTART = newRunOperation("restart", false);
const RETRY_FAILURE_FUNCTION = operation({
  summary: "Retry a failed failure function",
  description: "Calls the run's failure function again when it failed (400 when it is in progress, succeeded or was cancelled).",
  tag: "Workflows",
  access: "full-token",
  path: DLQ_ID,
  responses: { 200: { description: "The run whose failure function is called again.", json: NEW_RUN } },
  errors: [404, 409],
});
const CANCEL_FAILURE_FUNCTION = operation({
  summary: "Cancel a failure function in progress",
  description:
    "Cancels the run's failure callback while it is in progress (after the run failed, or after a retry): nothing more is sent, and the failure function shows `CALLBACK_CANCELED`. 400 when none is in progress. Answers 302 without a body, as the hosted service documents it.",
  tag: "Workflows",
  access: "full-token",
  path: DLQ_ID,
  responses: { 302: "Cancelled (no body)." },
  errors: [404],
});
const GET = operation({
  summary: "Get a workflow DLQ entry",
  tag: "Workflows",
  access: "read",
  path: DLQ_ID,
  responses: { 200: { description: "The entry.", json: WORKFLOW_DLQ_MESSAGE } },
  errors: [404],
});
const DELETE = operation({
  summary: "Delete a workflow DLQ entry",
  tag: "Workflows",
  access: "full-token",
  path: DLQ_ID,
  responses: { 200: { description: "Deleted.", json: v.object({ deleted: v.number() }) } },
  errors: [404],
});

/** Routes of the workflow DLQ resource, mounted at `/v2/workflows/dlq`. */
export function workflowDlqRoutes(deps: AppDeps) {
  const { sql } = deps;
  const settings = messageSettings(deps.config);
  const restartMany = async (c: Context, mode: NewRunMode, op: Operation<typeof FILTER_BODY>) => {
    const params = await op.bulk(c);
    const picked = selection(params, true);
    const count = Math.min(integerParam(params, "count", 1, 1000, MAX_RESTARTS), MAX_RESTARTS);
    const { headers, dialect } = requestHeaders(c);
    const overrides = readRunOverrides(headers, dialect, deps.config);
    const page = { cursor: singleParam(params, "cursor"), count };
    const { items, cursor } = await sql.begin((tx) => newRunsFromDlq(tx, c.get("project"), picked, page, mode, overrides, settings));
    return c.json({ ...(cursor !== null && { cursor }), workflowRuns: items });
  };
  const restartOne = async (c: Context, mode: NewRunMode) => {
    const { headers, dialect } = requestHeaders(c);
    const overrides = readRunOverrides(headers, dialect, deps.config);
    return c.json(await sql.begin((tx) => newRunFromDlqEntry(tx, c.get("project"), c.req.param("dlqId")!, mode, overrides, settings)));
  };
  return new Hono()
    .get("/", LIST.describe, (c) => listRoute(c, deps, LIST))
    .delete("/", DELETE_MANY.describe, async (c) => {
      const params = await DELETE_MANY.bulk(c);
      const picked = selection(params, false);
      // Ids are deleted all at once; filters a page at a time.
      const count = "dlqIds" in picked ? picked.dlqIds.length : integerParam(params, "count", 1, MAX_COUNT, MAX_COUNT);
      const page = { cursor: singleParam(params, "cursor"), count };
      const { items, cursor } = await sql.begin((tx) => deleteWorkflowDlq(tx, c.get("project"), picked, page));
      return c.json({ deleted: items.length, ...(cursor !== null && { cursor }) });
    })
    .post("/resume", RESUME_MANY.describe, (c) => restartMany(c, "resume", RESUME_MANY))
    .post("/resume/:dlqId", RESUME.describe, (c) => restartOne(c, "resume"))
    .post("/restart", RESTART_MANY.describe, (c) => restartMany(c, "restart", RESTART_MANY))
    .post("/restart/:dlqId", RESTART.describe, (c) => restartOne(c, "restart"))
    .post("/callback/:dlqId", RETRY_FAILURE_FUNCTION.describe, async (c) =>
      c.json(await sql.begin((tx) => retryFailureFunction(tx, c.get("project"), c.req.param("dlqId"), settings))),
    )
    .delete("/callback/:dlqId", CANCEL_FAILURE_FUNCTION.describe, async (c) => {
      await sql.begin((tx) => cancelFailureFunction(tx, c.get("project"), c.req.param("dlqId")));
      return c.body(null, 302);
    })
    .get("/:dlqId", GET.describe, async (c) => c.json(workflowDlqMessageJson(await findWorkflowDlqEntry(sql, c.get("project"), c.req.param("dlqId")), redactorFor(c, deps.redactor))))
    .delete("/:dlqId", DELETE.describe, async (c) => {
      const dlqId = c.req.param("dlqId");
      const deleted = await sql.begin(async (tx) => {
        await findWorkflowDlqEntry(tx, c.get("project"), dlqId, true);
        return deleteWorkflowDlq(tx, c.get("project"), { dlqIds: [dlqId] }, { cursor: null, count: 1 });
      });
      return c.json({ deleted: deleted.items.length });
    });
}

/**
 * `GET /v2/dlq?source=workflow`, the SDK's `client.dlq.list` (docs/workflow-protocol.md
 * §11): mounted at `/v2/dlq` before the plain DLQ, which serves every other request.
 */
export function workflowDlqHandOff(deps: AppDeps) {
  return new Hono().get("/", LIST_FOR_SDK.describe, async (c, next) => {
    if (c.req.query("source") !== "workflow") return next();
    return listRoute(c, deps, LIST_FOR_SDK);
  });
}

async function listRoute(c: Context, deps: AppDeps, op: Operation<undefined>) {
  const params = op.query(c);
  const page = { cursor: singleParam(params, "cursor"), count: integerParam(params, "count", 1, MAX_COUNT, MAX_COUNT) };
  const { items, cursor } = await listWorkflowDlq(deps.sql, c.get("project"), selection(params, false), page);
  return c.json({ messages: items.map((entry) => workflowDlqMessageJson(entry, redactorFor(c, deps.redactor))), ...(cursor !== null && { cursor }) });
}

/**
 * DLQ ids (the filters are then ignored), else the filters. `runIdPrefix`:
 * `workflowRunId` also matches ids it is a prefix of (bulk resume and restart).
 */
function selection(params: Params, runIdPrefix: boolean): WorkflowDlqSelection {
  const dlqIds = listParam(params, ["dlqIds"]);
  if (dlqIds !== null) return { dlqIds };
  const states = listParam(params, ["failureFunctionState"]);
  const badState = states?.find((state) => !(FAILURE_FUNCTION_STATES as readonly string[]).includes(state));
  if (badState !== undefined) throw badRequest(`failureFunctionState must be one of ${FAILURE_FUNCTION_STATES.join(", ")}, got "${badState}"`);
  return {
    filter: {
      workflowUrl: listParam(params, ["workflowUrl", "url"], false) ?? undefined,
      workflowRunId: listParam(params, ["workflowRunId"]) ?? undefined,
      runIdPrefix,
      workflowCreatedAt: listParam(params, ["workflowCreatedAt"])?.map((text) => integer(text, "workflowCreatedAt")),
      label: listParam(params, ["label"]) ?? undefined,
      failureFunctionState: states ?? undefined,
      callerIp: listParam(params, ["callerIp", "callerIP"]) ?? undefined,
      flowControlKey: listParam(params, ["flowControlKey"]) ?? undefined,
      responseStatus: listParam(params, ["responseStatus"])?.map((text) => integer(text, "responseStatus")),
    },
    range: timeRangeParams(params),
  };
}

function integer(text: string, name: string): number {
  if (!/^\d{1,15}$/.test(text)) throw badRequest(`${name} must be a whole number, got "${text}"`);
  return Number(text);
}

/** A workflow DLQ entry as the API shows it (`DLQMessage` of the SDK, docs/workflow-protocol.md §13). */
export function workflowDlqMessageJson(entry: WorkflowDlqEntry, redactor: Redactor) {
  const { run } = entry;
  const response = entry.responseBody === null ? { body: "" } : bodyFields(entry.responseBody);
  const failure = run.failureResponse;
  return {
    ...messageJson(entry.message, redactor),
    dlqId: entry.dlqId,
    workflowRunId: run.runId,
    workflowCreatedAt: run.createdAt.getTime(),
    workflowUrl: run.workflowUrl,
    // 0 when the last attempt got no response.
    responseStatus: entry.responseStatus ?? 0,
    responseHeader: canonicalHeaders(entry.responseHeaders ?? {}),
    ...("body" in response ? { responseBody: response.body } : { responseBodyBase64: response.bodyBase64 }),
    ...(run.failureCallback !== null && {
      failureCallback: run.failureCallback,
      failureCallbackInfo: {
        ...(run.failureCallbackState !== null && { state: run.failureCallbackState }),
        ...(failure !== null && {
          responseStatus: failure.status,
          responseBody: failure.body,
          responseHeaders: canonicalHeaders(failure.headers),
        }),
      },
    }),
    ...(run.failureCallbackState !== null && { failureFunctionState: run.failureCallbackState }),
    ...(run.callerIp !== null && { callerIP: run.callerIp }),
    ...(run.labels !== null && run.labels.length > 0 && { label: run.labels[0], labels: run.labels }),
    ...(run.flowControlKey !== null && { flowControlKey: run.flowControlKey }),
    ...(entry.error !== null && { error: entry.error }),
  };
}
