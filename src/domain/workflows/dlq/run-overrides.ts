/**
 * What a resume or restart request may change for the new run
 * (docs/interface.md "POST /v2/workflows/dlq/resume", docs/hosted-api.md §13.4): the
 * override headers, and the new run's configuration made from the original's.
 */
import { badRequest } from "../../errors";
import { PREFIX } from "../../headers/dialect";
import type { Dialect } from "../../../db/vocabulary";
import { parsePublishOptions, type PublishLimits } from "../../publish/options";
import type { RunConfig } from "../runs";
import type { Run } from "../runs";
import { failureCallbackHeaders } from "../trigger";

/** Settings a resume or restart request changes for the new run; null keeps the original's. */
export interface RunOverrides {
  maxRetries: number | null;
  retryDelayExpression: string | null;
  flowControlKey: string | null;
  flowControlValue: string | null;
  labels: string[] | null;
  failureCallback: string | null;
  /** Delay of the new run's first delivery. */
  delayMs: number | null;
  /** The dialect the override headers were given in (names errors and new headers). */
  dialect: Dialect;
}

/**
 * Reads the override headers of a resume or restart request: `Retries`,
 * `Retry-Delay`, `Flow-Control-Key`, `Flow-Control-Value`, `Delay`, `Label`
 * and `Failure-Callback`, validated as publish headers are.
 */
export function readRunOverrides(headers: Record<string, string>, dialect: Dialect, limits: PublishLimits): RunOverrides {
  const p = PREFIX[dialect].toLowerCase();
  const given = (name: string) => (headers[p + name]?.trim() ? headers[p + name]! : null);
  const names = ["retries", "retry-delay", "delay", "label", "failure-callback"].filter((name) => given(name) !== null);
  const options = parsePublishOptions(Object.fromEntries(names.map((name) => [p + name, given(name)!])), dialect, limits);
  return {
    maxRetries: given("retries") === null ? null : options.retries,
    retryDelayExpression: options.retryDelayExpression,
    flowControlKey: given("flow-control-key")?.trim() ?? null,
    flowControlValue: given("flow-control-value"),
    labels: given("label") === null ? null : options.labels,
    failureCallback: options.failureCallback?.url ?? null,
    delayMs: given("delay") === null ? null : options.delayMs,
    dialect,
  };
}

/**
 * The new run's configuration: the original's with the overrides applied.
 * Callback headers that name the run (`Workflow-Runid`) name the new run, so
 * its failure callback and call results join it.
 */
export function newRunConfig(
  original: Run,
  runId: string,
  userHeaders: Record<string, string>,
  overrides: RunOverrides,
  limits: PublishLimits,
): RunConfig {
  const config = original.config as unknown as RunConfig;
  const maxRetries = overrides.maxRetries ?? config.maxRetries;
  let callbackHeaders = rebindRunId(config.failureCallbackHeaders, runId);
  if (overrides.failureCallback !== null && callbackHeaders === null) {
    // The original had no failure callback (a run started by a direct POST, docs/workflow-protocol.md §3.2): make it a workflow one.
    const p = PREFIX[overrides.dialect].toLowerCase();
    const headers = failureCallbackHeaders(overrides.dialect, { runId, workflowUrl: original.workflowUrl, userHeaders, config: {} });
    const options = parsePublishOptions(
      { ...headers, [`${p}failure-callback`]: overrides.failureCallback, [`${p}retries`]: String(maxRetries) },
      overrides.dialect,
      limits,
    );
    callbackHeaders = options.failureCallback!.headers;
  }
  return {
    ...config,
    maxRetries,
    retryDelayExpression: overrides.retryDelayExpression ?? config.retryDelayExpression,
    flowControl: overriddenFlowControl(config.flowControl, overrides, limits),
    failureCallback: overrides.failureCallback ?? config.failureCallback,
    failureCallbackHeaders: callbackHeaders,
  };
}

/** Key and value are overridden one by one (docs/interface.md "POST /v2/workflows/dlq/resume"). */
function overriddenFlowControl(original: RunConfig["flowControl"], overrides: RunOverrides, limits: PublishLimits) {
  if (overrides.flowControlKey === null && overrides.flowControlValue === null) return original;
  const p = PREFIX[overrides.dialect].toLowerCase();
  const key = overrides.flowControlKey ?? original?.key;
  const value = overrides.flowControlValue ?? original?.value;
  if (key === undefined || value === undefined) {
    throw badRequest(`${p}flow-control-key and ${p}flow-control-value are both needed: the run has no flow control to keep the other from`);
  }
  const headers = { [`${p}flow-control-key`]: key, [`${p}flow-control-value`]: value };
  return parsePublishOptions(headers, overrides.dialect, limits).flowControl;
}

/** `headers` with every header that names a workflow run naming `runId` instead. */
export function rebindRunId(headers: Record<string, string> | null, runId: string): Record<string, string> | null {
  if (headers === null) return null;
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, /^(upstash|svc)-workflow-runid$/i.test(name) ? runId : value]),
  );
}

/** Forwarded headers with the label copy `context.label` reads replaced (or, with `add`, set) when labels are overridden. */
export function withLabels(headers: Record<string, string>, labels: string[] | null, dialect: Dialect, add: boolean) {
  if (labels === null) return headers;
  const name = Object.keys(headers).find((header) => /^(upstash|svc)-label$/i.test(header));
  if (name === undefined && !add) return headers;
  return { ...headers, [name ?? `${PREFIX[dialect]}Label`]: labels.join(",") };
}
