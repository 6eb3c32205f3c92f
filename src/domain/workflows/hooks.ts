/**
 * Installs what the message side calls in workflows through hooks it owns:
 * binding messages to their runs when they are stored (publish/insert.ts),
 * and telling a run about its messages' outcomes (delivery/outcome.ts). The
 * service calls it once at start-up.
 */
import { installRunHooks } from "../delivery/run-hooks";
import { installWorkflowBinder } from "../publish/workflow-binding";
import { bindMessagesToRuns } from "./binding";
import { failRun, failsRun, recordFailureFunction, workflowCallbackFields } from "./lifecycle";

export function installWorkflowHooks(): void {
  installWorkflowBinder(bindMessagesToRuns);
  installRunHooks({ callbackFields: workflowCallbackFields, recordFailureFunction, failsRun, failRun });
}
