/**
 * A workflow run's page: its step timeline as the run logs build it — the
 * initial step, sequential steps and parallel groups, sleeps, waits, calls
 * and invokes, what is under way or failed, and the failure function — each
 * step with how long it took, drawn on the run's time axis, and the error it
 * failed with; with cancel, "retry now" for a step waiting out its retry
 * backoff, and resume or restart from the DLQ. Refreshes itself.
 */
import type { FC } from "hono/jsx";
import type { RunLog } from "../../../../domain/workflows/logs/logs";
import type { RunDetail } from "../../../../domain/workflows/logs/run-detail";
import { Action, Badge, Facts, Live, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import { dlqEntryPath, runPath } from "../../kit/params";
import { RetryNow } from "../messages/retry-now";
import { axisOf, spanWords } from "./span";
import { FailureFunction, NextSteps, Step, type TimelineView, tone } from "./steps";

/** The page's own path, the runs list it came from, and its address keeping that way back (where its actions return). */
export interface RunPlace {
  path: string;
  list: string;
  here: string;
}

/** The run, its steps and its failure function, refreshed in place; its actions for a viewer who may act. */
export const RunPage: FC<{ detail: RunDetail; now: number; viewer: Viewer; place: RunPlace; cutAt: number }> = ({
  detail,
  now,
  viewer,
  place,
  cutAt,
}) => {
  const { run, timeline } = detail;
  const spans = [...timeline.results.values(), ...timeline.deliveries.values()];
  const axis = axisOf(run.workflowRunCreatedAt, run.workflowRunCompletedAt ?? now, spans, now);
  const view: TimelineView = { now, axis, timeline, cutAt };
  return (
    <>
      <h1>
        Workflow run <span class="mono">{run.workflowRunId}</span>
        <span class="subtitle mono">{run.workflowUrl}</span>
      </h1>
      <Live url={place.here}>
        <RunSummary detail={detail} now={now} viewer={viewer} place={place} />
        <h2>Steps</h2>
        <ol class="timeline steps">
          {run.steps.map((group) => (
            <StepGroup group={group} view={view} />
          ))}
        </ol>
        {run.failureFunction && <FailureFunction run={run} view={view} />}
      </Live>
    </>
  );
};

/** One entry of the step timeline: what is under way or failed, a parallel group, or a step. */
const StepGroup: FC<{ group: RunLog["steps"][number]; view: TimelineView }> = ({ group, view }) => {
  if (group.type === "next") return <NextSteps steps={group.steps} view={view} />;
  if (group.type === "sequential") {
    return (
      <li class={tone(group.steps)} data-group="sequential">
        <Step step={group.steps[0]} view={view} />
      </li>
    );
  }
  return (
    <li class={tone(group.steps)} data-group="parallel">
      <strong>Parallel group</strong> <span class="muted">({group.steps.length} steps)</span>
      <div class="parallel">
        {group.steps.map((step) => (
          <Step step={step} view={view} />
        ))}
      </div>
    </li>
  );
};

/** Where the run stands, what it relates to, and what may be done to it. */
const RunSummary: FC<{ detail: RunDetail; now: number; viewer: Viewer; place: RunPlace }> = ({ detail, now, viewer, place }) => {
  const { run } = detail;
  const back = { back: place.list };
  return (
    <div class="card">
      <Facts
        items={[
          ["State", <Badge state={run.workflowState} />],
          ["Workflow URL", <span class="mono">{run.workflowUrl}</span>],
          ["Created", <Time at={run.workflowRunCreatedAt} now={now} />],
          ["Finished", <Time at={run.workflowRunCompletedAt} now={now} />],
          ["Duration", spanWords({ start: run.workflowRunCreatedAt, end: run.workflowRunCompletedAt ?? null }, now, "running")],
          ["Labels", run.labels?.join(", ") ?? "—"],
          ["Result", run.workflowRunResponse === undefined ? "—" : <span class="mono">{run.workflowRunResponse.slice(0, 2000)}</span>],
          ["Invoked by", run.invoker ? <a href={runPath(run.invoker.workflowRunId)}>{run.invoker.workflowRunId}</a> : "—"],
          ["DLQ entry", run.dlqId ? <a href={dlqEntryPath(run.dlqId)}>{run.dlqId}</a> : "—"],
        ]}
      />
      <div class="actions">
        {run.workflowState === "RUN_STARTED" && (
          <Action viewer={viewer} action={`${place.path}/cancel`} label="Cancel run" danger confirm="Cancel this workflow run?" fields={back} />
        )}
        {waiting(run).map(({ messageId, name }) => {
          const message = detail.timeline.messages.get(messageId);
          return message && <RetryNow viewer={viewer} message={{ ...message, id: messageId }} now={now} back={place.here} label={`Retry “${name}” now`} />;
        })}
        {run.dlqId && run.workflowState === "RUN_FAILED" && (
          <>
            <Action viewer={viewer} action={`${place.path}/resume`} label="Resume from the failed step" />
            <Action viewer={viewer} action={`${place.path}/restart`} label="Restart from the beginning" />
          </>
        )}
      </div>
    </div>
  );
};

/** The run's messages that may wait out a retry backoff (a retrying step, the failure function), with what to call them. */
function waiting(run: RunLog): { messageId: string; name: string }[] {
  const next = run.steps.flatMap((group) => (group.type === "next" ? group.steps : []));
  const steps = next.filter((step) => step.state === "STEP_RETRY").map((step) => ({ messageId: step.messageId, name: step.stepName ?? "next step" }));
  const failure = run.failureFunction ? [{ messageId: run.failureFunction.messageId, name: "failure function" }] : [];
  return [...steps, ...failure];
}
