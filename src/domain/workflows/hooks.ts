/**
 * Installs what the message side calls in workflows through hooks it owns:
 * binding messages to their runs when they are stored (publish/insert.ts),
 * and telling a run about its messages' outcomes (delivery/outcome.ts). The
 * service calls it once at start-up.
 */
import { installRunEntries } from "../dlq/run-entries";
import { installRunHooks } from "../delivery/run-hooks";
import { installWorkflowBinder } from "../publish/workflow-binding";
import { bindMessagesToRuns } from "./binding";
import { runEntryIds } from "./dlq/dlq";
import { resumeFromPlainRetry } from "./dlq/resume";
import { readRunOverrides } from "./dlq/run-overrides";
import { failRun, failsRun, recordFailureFunction, workflowCallbackFields } from "./lifecycle";
import { lockRunsOf } from "./runs";

export function installWorkflowHooks(): void {
  installWorkflowBinder(bindMessagesToRuns);
  installRunEntries({
    ofRuns: runEntryIds,
    resume: (tx, project, dlqIds, overrides, settings) =>
      resumeFromPlainRetry(tx, project, dlqIds, readRunOverrides(overrides.headers, overrides.dialect, settings.limits), settings),
  });
  installRunHooks({ lockRuns: lockRunsOf, callbackFields: workflowCallbackFields, recordFailureFunction, failsRun, failRun });
}
