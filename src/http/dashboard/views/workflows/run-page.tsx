/**
 * A workflow run's page: its step timeline as the run logs build it — the
 * initial step, sequential steps and parallel groups, sleeps, waits, calls
 * and invokes, what is under way or failed, and the failure function — with
 * cancel, and resume or restart from the DLQ. Refreshes itself.
 */
import type { RunLog } from "../../../../domain/workflows/logs/logs";
import { Action, Badge, Facts, Live, Time } from "../../components";
import type { Viewer } from "../../env";
import { FailureFunction, NextSteps, Step, tone } from "./steps";

/** The run, its steps and its failure function, refreshed in place; its actions for a viewer who may act. */
export const RunPage = ({ run, now, viewer }: { run: RunLog; now: number; viewer: Viewer }) => {
  const path = `/dashboard/workflows/${encodeURIComponent(run.workflowRunId)}`;
  return (
    <>
      <h1 class="mono">{run.workflowRunId}</h1>
      <Live url={path}>
        <RunSummary run={run} now={now} viewer={viewer} path={path} />
        <h2>Steps</h2>
        <ol class="timeline steps">
          {run.steps.map((group) =>
            group.type === "next" ? (
              <NextSteps steps={group.steps} now={now} />
            ) : group.type === "parallel" ? (
              <li class={tone(group.steps)} data-group="parallel">
                <strong>Parallel group</strong> <span class="muted">({group.steps.length} steps)</span>
                <div class="parallel">
                  {group.steps.map((step) => (
                    <Step step={step} now={now} />
                  ))}
                </div>
              </li>
            ) : (
              <li class={tone(group.steps)} data-group="sequential">
                <Step step={group.steps[0]} now={now} />
              </li>
            ),
          )}
        </ol>
        {run.failureFunction && <FailureFunction run={run} now={now} />}
      </Live>
    </>
  );
};

/** Where the run stands, what it relates to, and what may be done to it. */
const RunSummary = ({ run, now, viewer, path }: { run: RunLog; now: number; viewer: Viewer; path: string }) => (
  <div class="card">
    <Facts
      items={[
        ["State", <Badge state={run.workflowState} />],
        ["Workflow URL", <span class="mono">{run.workflowUrl}</span>],
        ["Created", <Time at={run.workflowRunCreatedAt} now={now} />],
        ["Finished", <Time at={run.workflowRunCompletedAt} now={now} />],
        ["Labels", run.labels?.join(", ") ?? "—"],
        ["Result", run.workflowRunResponse === undefined ? "—" : <span class="mono">{run.workflowRunResponse.slice(0, 2000)}</span>],
        ["Invoked by", run.invoker ? <a href={`/dashboard/workflows/${encodeURIComponent(run.invoker.workflowRunId)}`}>{run.invoker.workflowRunId}</a> : "—"],
        ["DLQ entry", run.dlqId ? <a href={`/dashboard/dlq/${encodeURIComponent(run.dlqId)}`}>{run.dlqId}</a> : "—"],
      ]}
    />
    <div class="actions">
      {run.workflowState === "RUN_STARTED" && (
        <Action viewer={viewer} action={`${path}/cancel`} label="Cancel run" danger confirm="Cancel this workflow run?" />
      )}
      {run.dlqId && run.workflowState === "RUN_FAILED" && (
        <>
          <Action viewer={viewer} action={`${path}/resume`} label="Resume from the failed step" />
          <Action viewer={viewer} action={`${path}/restart`} label="Restart from the beginning" />
        </>
      )}
    </div>
  </div>
);
