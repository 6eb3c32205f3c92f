/**
 * What a workflow message looks like on the wire (docs/workflow-protocol.md §4):
 * step deliveries carry the run's step list up to themselves, deliveries to
 * the workflow URL carry the run-level user headers, and every delivery names
 * its run.
 */
import type { Tx } from "../../db/client";
import type { Attempt, Outcome } from "../delivery/attempt";
import { PREFIX } from "../headers/dialect";
import { NON_WORKFLOW_DESTINATION, REST_TRIGGER_NEEDS_V1, SDK_HEADER, SDK_VERSION_HEADER } from "../headers/workflow";
import type { StoredMessage } from "../messages/message";
import { findRun, stepList } from "./runs";

/**
 * A message ready to send, and what its response must prove: that a workflow
 * SDK answered (`detectTrigger`), and a v1 SDK at that (`restTrigger`).
 */
export interface WorkflowDelivery<M extends StoredMessage = StoredMessage> {
  message: M;
  detectTrigger: boolean;
  restTrigger?: boolean;
}

/** The message as it is sent: envelope body and run headers for workflow messages, unchanged otherwise. */
export async function prepareDelivery<M extends StoredMessage>(tx: Tx, message: M): Promise<WorkflowDelivery<M>> {
  if (message.workflowRunPk === null) return { message, detectTrigger: false };
  const run = await findRun(tx, message.workflowRunPk);
  if (!run) return { message, detectTrigger: false };
  const p = PREFIX[message.dialect];
  const toWorkflow = message.workflowCallType !== "toCallback";
  // Every step of a run is attempted in the trace that started it, whichever request published the step.
  const traceparent = run.traceparent ?? message.traceparent;
  const headers: Record<string, string> = {
    ...(toWorkflow ? run.userHeaders : {}),
    ...message.headers,
    [`${p}Workflow-RunId`]: run.runId,
    [`${p}Workflow-Url`]: run.workflowUrl,
    [`${p}Workflow-CreatedAt`]: String(run.createdAt.getTime()),
  };
  if (message.workflowCallType !== "step") return { message: { ...message, headers, traceparent }, detectTrigger: false };
  const steps = await stepList(tx, run.pk, message.id);
  const isInit = steps.length === 1;
  return {
    message: { ...message, headers, traceparent, body: Buffer.from(JSON.stringify(steps)) },
    detectTrigger: isInit && (run.featureSet ?? "").split(",").includes("WF_DetectTrigger"),
    restTrigger: isInit && run.config.restTrigger === true,
  };
}

/**
 * WF_DetectTrigger (§2.4): a trigger answered 2xx by something that is not a
 * workflow SDK (no version header in the response) fails the run at once; so
 * does a REST trigger answered by an SDK older than v1, which cannot start a
 * run it did not publish (no `Upstash-Workflow-Sdk` header, §3.4).
 */
export function detectNonWorkflowDestination(delivery: WorkflowDelivery, attempt: Attempt, outcome: Outcome): Outcome {
  if (outcome.kind !== "delivered" || attempt.kind !== "response") return outcome;
  if (delivery.detectTrigger && !attempt.headers[SDK_VERSION_HEADER]) return { kind: "failed", error: NON_WORKFLOW_DESTINATION };
  if (delivery.restTrigger && !attempt.headers[SDK_HEADER]) return { kind: "failed", error: REST_TRIGGER_NEEDS_V1 };
  return outcome;
}
