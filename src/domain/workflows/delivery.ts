/**
 * What a workflow message looks like on the wire (workflow-protocol.md §4):
 * step deliveries carry the run's step list up to themselves, deliveries to
 * the workflow URL carry the run-level user headers, and every delivery names
 * its run.
 */
import type { Tx } from "../../db/client";
import type { Attempt, Outcome, StoredMessage } from "../delivery/attempt";
import { PREFIX } from "../dialect";
import { NON_WORKFLOW_DESTINATION, SDK_VERSION_HEADER } from "./protocol";
import { findRun, stepList } from "./runs";

/** A message ready to send, and whether its response must prove a workflow SDK answered. */
export interface WorkflowDelivery {
  message: StoredMessage;
  detectTrigger: boolean;
}

/** The message as it is sent: envelope body and run headers for workflow messages, unchanged otherwise. */
export async function prepareDelivery(tx: Tx, message: StoredMessage): Promise<WorkflowDelivery> {
  if (message.workflowRunPk === null) return { message, detectTrigger: false };
  const run = await findRun(tx, message.workflowRunPk);
  if (!run) return { message, detectTrigger: false };
  const p = PREFIX[message.dialect];
  const toWorkflow = message.workflowCallType !== "toCallback";
  const headers: Record<string, string> = {
    ...(toWorkflow ? run.userHeaders : {}),
    ...message.headers,
    [`${p}Workflow-RunId`]: run.runId,
    [`${p}Workflow-Url`]: run.workflowUrl,
    [`${p}Workflow-CreatedAt`]: String(run.createdAt.getTime()),
  };
  if (message.workflowCallType !== "step") return { message: { ...message, headers }, detectTrigger: false };
  const steps = await stepList(tx, run.pk, message.id);
  const isInit = steps.length === 1;
  return {
    message: { ...message, headers, body: Buffer.from(JSON.stringify(steps)) },
    detectTrigger: isInit && (run.featureSet ?? "").split(",").includes("WF_DetectTrigger"),
  };
}

/**
 * WF_DetectTrigger (§2.4): a trigger answered 2xx by something that is not a
 * workflow SDK (no version header in the response) fails the run at once.
 */
export function detectNonWorkflowDestination(delivery: WorkflowDelivery, attempt: Attempt, outcome: Outcome): Outcome {
  if (!delivery.detectTrigger || outcome.kind !== "delivered" || attempt.kind !== "response") return outcome;
  return attempt.headers[SDK_VERSION_HEADER] ? outcome : { kind: "failed", error: NON_WORKFLOW_DESTINATION };
}
