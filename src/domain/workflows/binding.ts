/**
 * Binding workflow messages to their runs as they are stored, in the insert
 * transaction (docs/workflow-protocol.md §3.5, §15 items 2-3): an init message
 * creates its run (or is deduplicated against the active one), every other
 * message joins its run's step list and takes the run's configuration. A
 * message's run is found in the message's project (the publishing token's):
 * another project's run of the same id is not its run. (A
 * step's `Not-Before` was made the end of the second the SDK rounded it to
 * when the message was built: publish/not-before.ts.)
 */
import type { Tx } from "../../db/client";
import { badRequest } from "../errors";
import { runUserHeaders, type WorkflowBinding } from "../headers/workflow";
import type { NewMessage } from "../messages/new-message";
import { unionFields } from "../messages/redaction";
import { checkJsonText } from "../storable-text";
import { appendSteps, createRun, findActiveRun, findLatestRun, type Invoker, type Run, type RunConfig } from "./runs";

/**
 * Binds the workflow messages among `messages` (setting `workflowRunPk`) and
 * appends their step entries. Returns, for init messages of an already active
 * run, the id of that run's init message (the trigger is deduplicated).
 */
export async function bindMessagesToRuns(tx: Tx, messages: NewMessage[]): Promise<Map<string, string>> {
  const duplicates = new Map<string, string>();
  const steps: Parameters<typeof appendSteps>[1] = [];
  for (const message of messages) {
    const binding = message.workflow;
    if (binding === null) continue;
    if (binding.init) {
      const bound = await bindInit(tx, message, binding);
      if ("duplicateOf" in bound) duplicates.set(message.id, bound.duplicateOf);
      else steps.push({ runPk: bound.runPk, project: message.project, messageId: message.id, callType: "step", body: bound.entryBody });
      continue;
    }
    const run = await bindStep(tx, message, binding);
    if (run) steps.push({ runPk: run.pk, project: message.project, messageId: message.id, callType: binding.callType, body: message.body });
  }
  await appendSteps(tx, steps);
  return duplicates;
}

async function bindInit(
  tx: Tx,
  message: NewMessage,
  binding: WorkflowBinding,
): Promise<{ runPk: number; entryBody: Buffer } | { duplicateOf: string }> {
  const { entryBody, invoker } = binding.invoke ? readInvokeEnvelope(message.body) : { entryBody: message.body, invoker: null };
  const active = await findActiveRun(tx, message.project, binding.runId);
  if (active && binding.triggeredBySdk && !(await hasProgressed(tx, active.pk))) {
    await replaceInit(tx, message, active);
    return { runPk: active.pk, entryBody };
  }
  const created = await createRun(tx, {
    runId: binding.runId,
    project: message.project,
    workflowUrl: binding.workflowUrl ?? message.url,
    dialect: message.dialect,
    config: runConfigOf(message),
    userHeaders: runUserHeaders(message.headers),
    labels: message.labels,
    featureSet: binding.featureSet.join(","),
    callerIp: message.callerIp,
    traceparent: message.traceparent,
    invoker,
  });
  if (!created) return { duplicateOf: await initMessageId(tx, message.project, binding.runId) };
  message.workflowRunPk = created.pk;
  return { runPk: created.pk, entryBody };
}

/**
 * The re-trigger after an unknown-SDK probe (§3.4): the SDK's init replaces
 * the placeholder as the run's step list and user headers, and takes the
 * run's configuration, which the SDK does not repeat (WF_TriggerOnConfig).
 */
async function replaceInit(tx: Tx, message: NewMessage, run: Run): Promise<void> {
  await tx`delete from dispatch.workflow_steps where run_pk = ${run.pk}`;
  await tx`update dispatch.workflow_runs set user_headers = ${tx.json(runUserHeaders(message.headers))} where pk = ${run.pk}`;
  message.workflowRunPk = run.pk;
  applyRunConfig(message, run.config);
  message.redactFields = unionFields(message.redactFields, run.config.redactFields ?? null);
}

/**
 * Whether the run's step list holds more than its init. A re-trigger then
 * comes too late (a probe delivered again after the run went on) and is
 * deduplicated instead of throwing the run's progress away.
 */
async function hasProgressed(tx: Tx, runPk: number): Promise<boolean> {
  const rows = await tx`select 1 from dispatch.workflow_steps where run_pk = ${runPk} offset 1 limit 1`;
  return rows.length > 0;
}

/**
 * A later message of a run. Published by a client it needs an active run
 * (else 400, which tells the SDK the run has ended); made by Dispatch itself
 * (a call result, a failure callback) it joins the latest run with the id.
 */
async function bindStep(tx: Tx, message: NewMessage, binding: WorkflowBinding): Promise<Run | null> {
  const run =
    message.origin === "publish"
      ? await findActiveRun(tx, message.project, binding.runId)
      : await findLatestRun(tx, message.project, binding.runId);
  if (!run) {
    if (message.origin === "publish") throw badRequest(`workflow run ${binding.runId} does not exist or has already ended`);
    return null;
  }
  message.workflowRunPk = run.pk;
  if (binding.callType === "step" || binding.callType === "fromCallback") applyRunConfig(message, run.config);
  // What the run's trigger asked to hide is hidden in every message of the run, calls and failure calls too.
  message.redactFields = unionFields(message.redactFields, run.config.redactFields ?? null);
  return run;
}

/** The run-level configuration an init message carries (WF_TriggerOnConfig). */
export function runConfigOf(message: NewMessage): RunConfig {
  return {
    maxRetries: message.maxRetries,
    retryDelayExpression: message.retryDelayExpression,
    timeoutMs: message.timeoutMs,
    failureCallback: message.failureCallback,
    failureCallbackHeaders: message.failureCallbackHeaders,
    flowControl: message.flowControl,
    redactFields: message.redactFields,
  };
}

function applyRunConfig(message: NewMessage, config: RunConfig): void {
  message.maxRetries = config.maxRetries;
  message.retryDelayExpression = config.retryDelayExpression;
  message.timeoutMs ??= config.timeoutMs;
  message.failureCallback = config.failureCallback;
  message.failureCallbackHeaders = config.failureCallbackHeaders;
  message.flowControl ??= config.flowControl;
}

async function initMessageId(tx: Tx, project: string, runId: string): Promise<string> {
  const [row] = await tx<{ messageId: string }[]>`
    select s.message_id as "messageId" from dispatch.workflow_steps s
    join dispatch.workflow_runs r on r.project = s.project and r.pk = s.run_pk
    where r.project = ${project} and s.project = ${project} and r.run_id = ${runId} and r.state = 'RUN_STARTED' order by s.seq limit 1`;
  return row?.messageId ?? runId;
}

/** Splits a `context.invoke` body into the child's payload and its invoker (§8.1). */
function readInvokeEnvelope(body: Buffer): { entryBody: Buffer; invoker: Invoker } {
  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(body.toString("utf8"));
  } catch {
    throw badRequest("an invoke message must carry a JSON invoke envelope");
  }
  // The invoker is stored as jsonb; the child's payload (`body`) is a message body, bytes.
  checkJsonText(envelope, (path) => path.length === 1 && path[0] === "body");
  const payload = envelope.body;
  return {
    entryBody: Buffer.from(typeof payload === "string" ? payload : payload === undefined ? "" : JSON.stringify(payload)),
    invoker: {
      workflowRunId: String(envelope.workflowRunId ?? ""),
      workflowRunCreatedAt: Number(envelope.workflowRunCreatedAt ?? 0),
      workflowUrl: String(envelope.workflowUrl ?? ""),
      headers: (envelope.headers ?? {}) as Record<string, string[]>,
      step: (envelope.step ?? {}) as Record<string, unknown>,
    },
  };
}
