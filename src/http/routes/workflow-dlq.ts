/**
 * The workflow DLQ (docs/workflow-protocol.md §11, §13; docs/hosted-api.md §13.4;
 * docs/interface.md "POST /v2/workflows/dlq/resume"): list, read and delete the
 * entries of failed runs; resume or restart their runs as new runs; retry a
 * failed failure function. The SDK lists through `GET /v2/dlq?source=workflow`,
 * which `workflowDlqHandOff` takes over from the plain DLQ.
 */
import { type Context, Hono } from "hono";
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
import {
  type NewRunMode,
  newRunsFromDlq,
  newRunFromDlqEntry,
  retryFailureFunction,
} from "../../domain/workflows/dlq/resume";
import { readRunOverrides } from "../../domain/workflows/dlq/run-overrides";
import type { AppDeps } from "../deps";
import { bulkParams, integerParam, listParam, type Params, queryParams, singleParam, timeRangeParams } from "../query";
import { requestHeaders } from "../request";
import { bodyFields } from "../serialize";
import { messageJson } from "./messages";

const FILTERS = [
  "fromDate", "toDate", "workflowUrl", "url", "workflowRunId", "workflowCreatedAt", "label", "failureFunctionState",
  "callerIp", "callerIP", "flowControlKey", "responseStatus",
];
const LIST_PARAMETERS = ["cursor", "count", ...FILTERS];
const ACTION_PARAMETERS = ["dlqIds", ...LIST_PARAMETERS];

/** Page size of the list and bulk delete: default and maximum (docs/hosted-api.md §13.4). */
const MAX_COUNT = 100;
/** Runs per bulk resume or restart (docs/interface.md "Limits"); a larger `count` is capped. */
const MAX_RESTARTS = 50;

const FAILURE_FUNCTION_STATES = ["CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL", "CALLBACK_CANCELED"];

/** Routes of the workflow DLQ resource, mounted at `/v2/workflows/dlq`. */
export function workflowDlqRoutes(deps: AppDeps) {
  const { sql } = deps;
  const settings = messageSettings(deps.config);
  const restartMany = async (c: Context, mode: NewRunMode) => {
    const params = await bulkParams(c, ACTION_PARAMETERS);
    const picked = selection(params, true);
    const count = Math.min(integerParam(params, "count", 1, 1000, MAX_RESTARTS), MAX_RESTARTS);
    const { headers, dialect } = requestHeaders(c);
    const overrides = readRunOverrides(headers, dialect, deps.config);
    const page = { cursor: singleParam(params, "cursor"), count };
    const { items, cursor } = await sql.begin((tx) => newRunsFromDlq(tx, picked, page, mode, overrides, settings));
    return c.json({ ...(cursor !== null && { cursor }), workflowRuns: items });
  };
  const restartOne = async (c: Context, mode: NewRunMode) => {
    const { headers, dialect } = requestHeaders(c);
    const overrides = readRunOverrides(headers, dialect, deps.config);
    return c.json(await sql.begin((tx) => newRunFromDlqEntry(tx, c.req.param("dlqId")!, mode, overrides, settings)));
  };
  return new Hono()
    .get("/", (c) => listRoute(c, deps, LIST_PARAMETERS))
    .delete("/", async (c) => {
      const params = await bulkParams(c, ACTION_PARAMETERS);
      const picked = selection(params, false);
      // Ids are deleted all at once; filters a page at a time.
      const count = "dlqIds" in picked ? picked.dlqIds.length : integerParam(params, "count", 1, MAX_COUNT, MAX_COUNT);
      const page = { cursor: singleParam(params, "cursor"), count };
      const { items, cursor } = await sql.begin((tx) => deleteWorkflowDlq(tx, picked, page));
      return c.json({ deleted: items.length, ...(cursor !== null && { cursor }) });
    })
    .post("/resume", (c) => restartMany(c, "resume"))
    .post("/resume/:dlqId", (c) => restartOne(c, "resume"))
    .post("/restart", (c) => restartMany(c, "restart"))
    .post("/restart/:dlqId", (c) => restartOne(c, "restart"))
    .post("/callback/:dlqId", async (c) =>
      c.json(await sql.begin((tx) => retryFailureFunction(tx, c.req.param("dlqId"), settings))),
    )
    .get("/:dlqId", async (c) => c.json(workflowDlqMessageJson(await findWorkflowDlqEntry(sql, c.req.param("dlqId")), deps.redactor)))
    .delete("/:dlqId", async (c) => {
      const dlqId = c.req.param("dlqId");
      const deleted = await sql.begin(async (tx) => {
        await findWorkflowDlqEntry(tx, dlqId, true);
        return deleteWorkflowDlq(tx, { dlqIds: [dlqId] }, { cursor: null, count: 1 });
      });
      return c.json({ deleted: deleted.items.length });
    });
}

/**
 * `GET /v2/dlq?source=workflow`, the SDK's `client.dlq.list` (docs/workflow-protocol.md
 * §11): mounted at `/v2/dlq` before the plain DLQ, which serves every other request.
 */
export function workflowDlqHandOff(deps: AppDeps) {
  return new Hono().get("/", async (c, next) => {
    if (c.req.query("source") !== "workflow") return next();
    return listRoute(c, deps, [...LIST_PARAMETERS, "source"]);
  });
}

async function listRoute(c: Context, deps: AppDeps, allowed: string[]) {
  const params = queryParams(c, allowed);
  const page = { cursor: singleParam(params, "cursor"), count: integerParam(params, "count", 1, MAX_COUNT, MAX_COUNT) };
  const { items, cursor } = await listWorkflowDlq(deps.sql, selection(params, false), page);
  return c.json({ messages: items.map((entry) => workflowDlqMessageJson(entry, deps.redactor)), ...(cursor !== null && { cursor }) });
}

/**
 * DLQ ids (the filters are then ignored), else the filters. `runIdPrefix`:
 * `workflowRunId` also matches ids it is a prefix of (bulk resume and restart).
 */
function selection(params: Params, runIdPrefix: boolean): WorkflowDlqSelection {
  const dlqIds = listParam(params, ["dlqIds"]);
  if (dlqIds !== null) return { dlqIds };
  const states = listParam(params, ["failureFunctionState"]);
  const badState = states?.find((state) => !FAILURE_FUNCTION_STATES.includes(state));
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
    ...(run.callerIp !== null && { callerIP: run.callerIp, callerIp: run.callerIp }),
    ...(run.labels !== null && run.labels.length > 0 && { label: run.labels[0], labels: run.labels }),
    ...(run.flowControlKey !== null && { flowControlKey: run.flowControlKey }),
    ...(entry.error !== null && { error: entry.error }),
  };
}
