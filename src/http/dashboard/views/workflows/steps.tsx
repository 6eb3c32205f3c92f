/**
 * The pieces of a run's step timeline: a logged step, what is under way or
 * failed, and the failure function; each with how long it took on the run's
 * time axis (span.tsx) and, when it failed, the error it failed with
 * (step-error.tsx).
 */
import type { FC } from "hono/jsx";
import type { NextStep, RunLog } from "../../../../domain/workflows/logs/logs";
import type { StepLog } from "../../../../domain/workflows/logs/steps";
import type { RunTimeline, Span } from "../../../../domain/workflows/logs/timeline";
import { Badge, Facts, HeadersTable, Time } from "../../kit/components";
import { messagePath, runPath } from "../../kit/params";
import { type Axis, SpanLine, spanWords } from "./span";
import { AnswerError, StepErrors, StoredBody } from "./step-error";

/** What every piece of the timeline is drawn against: the clock, the run's axis and timeline, and where stored responses are cut off. */
export interface TimelineView {
  now: number;
  axis: Axis;
  timeline: RunTimeline;
  /** Stored responses are cut off at this many bytes (DISPATCH_MAX_MESSAGE_SIZE). */
  cutAt: number;
}

/** The timeline tone of a group of steps: failed, all done, or under way. */
export const tone = (steps: { state: string }[]) =>
  steps.some((step) => step.state === "STEP_FAILED") ? "bad" : steps.every((step) => step.state === "STEP_SUCCESS") ? "ok" : "warn";

const SLEEPS = new Set(["SleepFor", "SleepUntil"]);

/** One logged step, with how long it took and the details of its type. */
export const Step: FC<{ step: StepLog; view: TimelineView }> = ({ step, view }) => {
  const { now } = view;
  // A result spans the step's run; a failed branch has no result, only its plan message's attempts.
  const span = (step.state === "STEP_SUCCESS" ? view.timeline.results : view.timeline.deliveries).get(step.messageId);
  return (
    <div class="step card" data-step-type={step.stepType} data-step-name={step.stepName}>
      <strong>{step.stepName}</strong> <span class="muted">{step.stepType}</span> <Badge state={step.state} />{" "}
      <Time at={step.createdAt} now={now} />
      {span && step.stepType !== "Initial" && (
        <SpanLine span={span} axis={view.axis} now={now} tone={tone([step])} verb={SLEEPS.has(step.stepType) ? "sleeping" : undefined} />
      )}
      {step.sleepFor !== undefined && <div>Sleeps {Math.round(step.sleepFor / 1000)} s</div>}
      {step.sleepUntil !== undefined && (
        <div>
          Sleeps until <Time at={step.sleepUntil} now={now} />
        </div>
      )}
      {step.waitEventId !== undefined && (
        <div>
          Waits for event <span class="mono">{step.waitEventId}</span> (timeout {step.waitTimeoutDuration}
          {step.waitTimeout ? ", timed out" : ""})
        </div>
      )}
      {step.callUrl !== undefined && <Call step={step} />}
      {step.invokedWorkflowRunId !== undefined && (
        <div>
          Invokes <a href={runPath(step.invokedWorkflowRunId)}>{step.invokedWorkflowRunId}</a>{" "}
          <span class="mono">{step.invokedWorkflowUrl}</span>
        </div>
      )}
      {step.out !== undefined && (
        <details>
          <summary>Output</summary>
          <StoredBody body={typeof step.out === "string" ? step.out : JSON.stringify(step.out)} />
        </details>
      )}
      <StepErrors errors={step.errors} cutAt={view.cutAt} now={now} />
    </div>
  );
};

/** A call step: what it called, and the response. */
const Call: FC<{ step: StepLog }> = ({ step }) => (
  <div>
    Calls <span class="mono">{step.callMethod} {step.callUrl}</span> → HTTP {step.callResponseStatus}
    <details>
      <summary>Call response</summary>
      <HeadersTable headers={step.callResponseHeaders} />
      <StoredBody body={step.callResponseBody ?? ""} />
    </details>
  </div>
);

/** What is under way, failed or cancelled: each message, how long it has been at it, and the error of its last failed attempt. */
export const NextSteps: FC<{ steps: NextStep[]; view: TimelineView }> = ({ steps, view }) => (
  <>
    {steps.map((step) => {
      const span = view.timeline.deliveries.get(step.messageId);
      const toneOf = step.state === "STEP_FAILED" ? "bad" : "warn";
      return (
        <li class={toneOf} data-group="next">
          <div class="step card" data-step-name={step.stepName ?? ""} data-step-state={step.state}>
            <strong>{step.stepName ?? "next step"}</strong> <Badge state={step.state} />{" "}
            <a class="mono" href={messagePath(step.messageId)}>{step.messageId}</a>
            {span && <SpanLine span={span} axis={view.axis} now={view.now} tone={toneOf} />}
            {step.nextDeliveryTime !== undefined && (
              <div data-next-attempt>
                Next attempt <Time at={step.nextDeliveryTime} now={view.now} />
              </div>
            )}
            <StepErrors errors={step.errors} cutAt={view.cutAt} now={view.now} />
          </div>
        </li>
      );
    })}
  </>
);

/** The failure function: what failed (the failed step's error, its stack folded: the step shows it open), and its own delivery. */
export const FailureFunction: FC<{ run: RunLog; view: TimelineView }> = ({ run, view }) => {
  const f = run.failureFunction!;
  const span: Span | undefined = view.timeline.deliveries.get(f.messageId);
  return (
    <section class="card" data-failure-function>
      <h2>Failure function</h2>
      <Facts
        items={[
          ["State", <Badge state={f.state} />],
          ["URL", <span class="mono">{f.url}</span>],
          ["Message", <a href={messagePath(f.messageId)}>{f.messageId}</a>],
          span !== undefined && ["Duration", spanWords(span, view.now)],
          ["Its response", f.responseStatus === undefined ? "—" : `HTTP ${f.responseStatus}`],
          f.nextDeliveryTime !== undefined && ["Next attempt", <Time at={f.nextDeliveryTime} now={view.now} />],
        ]}
      />
      <h3>What failed</h3>
      <AnswerError answer={{ status: f.failStatus, body: f.failResponse }} cutAt={view.cutAt} now={view.now} />
      {f.errors.length > 0 && <h3>Its failed attempts</h3>}
      <StepErrors errors={f.errors} cutAt={view.cutAt} now={view.now} />
      {f.responseBody !== undefined && f.responseBody !== "" && (
        <details>
          <summary>Its response</summary>
          <StoredBody body={f.responseBody} cutAt={view.cutAt} />
        </details>
      )}
    </section>
  );
};
