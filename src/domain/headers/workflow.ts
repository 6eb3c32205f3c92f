/**
 * The workflow protocol's headers as the server reads them from a publish
 * (docs/workflow-protocol.md §2.1). Header maps have lower-case names; the native
 * dialect reads the same names with the `svc-` prefix.
 */
import { checkText, MAX_ID_BYTES } from "../storable-text";
import { PREFIX } from "./dialect";
import { type Dialect, WORKFLOW_CALL_TYPES, type WorkflowCallType } from "../../db/vocabulary";

/** What a publish says about the run it belongs to. */
export interface WorkflowBinding {
  runId: string;
  /** True for the run-creating (trigger) message. */
  init: boolean;
  /** True when the init message is a `context.invoke` envelope (§8). */
  invoke: boolean;
  callType: WorkflowCallType;
  workflowUrl: string | null;
  featureSet: string[];
  /** Re-trigger after an unknown-SDK probe: replaces the run's init (§3.4). */
  triggeredBySdk: boolean;
}

/** Reads the workflow binding of a publish, or null for a plain message. */
export function readWorkflowBinding(headers: Record<string, string>, dialect: Dialect): WorkflowBinding | null {
  const p = PREFIX[dialect].toLowerCase();
  const runId = headers[`${p}workflow-runid`];
  if (runId === undefined || runId.trim() === "") return null;
  const callType = headers[`${p}workflow-calltype`] as WorkflowCallType | undefined;
  return {
    // A client may choose the run id (trigger, SDK): an id, bounded like every other.
    runId: checkText(runId.trim(), `${p}workflow-runid`, MAX_ID_BYTES),
    init: headers[`${p}workflow-init`]?.toLowerCase() === "true",
    invoke: headers[`${p}workflow-invoke`]?.toLowerCase() === "true",
    callType: callType && WORKFLOW_CALL_TYPES.includes(callType) ? callType : "step",
    workflowUrl: headers[`${p}workflow-url`] ?? null,
    featureSet: (headers[`${p}feature-set`] ?? "").split(",").map((flag) => flag.trim()).filter(Boolean),
    triggeredBySdk: headers[`${p}workflow-trigger-by-sdk`]?.toLowerCase() === "true",
  };
}

/**
 * Forwarded user headers of the init message, kept on the run and added to
 * every delivery to the workflow URL (§4.3). Protocol headers are left out so
 * a call-result callback is never mistaken for a step delivery.
 */
export function runUserHeaders(forwarded: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(forwarded).filter(([name]) => !/^(upstash|svc)-workflow-/i.test(name)),
  );
}

/** The headers a response from a workflow SDK always carries (§10). */
export const SDK_VERSION_HEADER = "upstash-workflow-sdk-version";

/**
 * Response header of a v1 workflow SDK naming its version; a REST trigger
 * needs it (§3.4: older SDKs cannot start a run they did not publish).
 */
export const SDK_HEADER = "upstash-workflow-sdk";

/** Error of a REST trigger answered by a workflow SDK older than v1 (§3.4). */
export const REST_TRIGGER_NEEDS_V1 = "trigger rest api is only usable with sdk versions after v1.0.0 major version";

/** Error of a trigger whose destination is not a workflow endpoint (§2.4 WF_DetectTrigger). */
export const NON_WORKFLOW_DESTINATION =
  "detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint";
