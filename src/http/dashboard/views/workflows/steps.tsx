/** The pieces of a run's step timeline: a logged step, what is under way or failed, and the failure function. */
import type { NextStep, RunLog } from "../../../../domain/workflows/logs/logs";
import type { StepError, StepLog } from "../../../../domain/workflows/logs/steps";
import { Badge, Facts, HeadersTable, Time } from "../../components";

/** The timeline tone of a group of steps: failed, all done, or under way. */
export const tone = (steps: { state: string }[]) =>
  steps.some((step) => step.state === "STEP_FAILED") ? "bad" : steps.every((step) => step.state === "STEP_SUCCESS") ? "ok" : "warn";

/** One logged step, with the details of its type. */
export const Step = ({ step, now }: { step: StepLog; now: number }) => (
  <div class="step card" data-step-type={step.stepType} data-step-name={step.stepName}>
    <strong>{step.stepName}</strong> <span class="muted">{step.stepType}</span> <Badge state={step.state} />{" "}
    <Time at={step.createdAt} now={now} />
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
        Invokes <a href={`/dashboard/workflows/${encodeURIComponent(step.invokedWorkflowRunId)}`}>{step.invokedWorkflowRunId}</a>{" "}
        <span class="mono">{step.invokedWorkflowUrl}</span>
      </div>
    )}
    {step.out !== undefined && (
      <details>
        <summary>Output</summary>
        <pre>{show(step.out)}</pre>
      </details>
    )}
    <StepErrors errors={step.errors} />
  </div>
);

/** A call step: what it called, and the response. */
const Call = ({ step }: { step: StepLog }) => (
  <div>
    Calls <span class="mono">{step.callMethod} {step.callUrl}</span> → HTTP {step.callResponseStatus}
    <details>
      <summary>Call response</summary>
      <HeadersTable headers={step.callResponseHeaders} />
      <pre>{step.callResponseBody}</pre>
    </details>
  </div>
);

/** The errors of a step's failed attempts, oldest first. */
const StepErrors = ({ errors }: { errors: StepError[] | undefined }) => (
  <>
    {(errors ?? []).map((error) => (
      <div class="error">
        HTTP {error.status}: {error.error}
      </div>
    ))}
  </>
);

/** What is under way, failed or cancelled. */
export const NextSteps = ({ steps, now }: { steps: NextStep[]; now: number }) => (
  <>
    {steps.map((step) => (
      <li class={step.state === "STEP_FAILED" ? "bad" : "warn"} data-group="next">
        <div class="step card" data-step-name={step.stepName ?? ""}>
          <strong>{step.stepName ?? "next step"}</strong> <Badge state={step.state} />{" "}
          <a class="mono" href={`/dashboard/messages/${encodeURIComponent(step.messageId)}`}>{step.messageId}</a>
          {step.nextDeliveryTime !== undefined && (
            <div>
              Next attempt <Time at={step.nextDeliveryTime} now={now} />
            </div>
          )}
          <StepErrors errors={step.errors} />
        </div>
      </li>
    ))}
  </>
);

/** The failure function: what failed, and its own delivery. */
export const FailureFunction = ({ run, now }: { run: RunLog; now: number }) => {
  const f = run.failureFunction!;
  return (
    <section class="card" data-failure-function>
      <h2>Failure function</h2>
      <Facts
        items={[
          ["State", <Badge state={f.state} />],
          ["URL", <span class="mono">{f.url}</span>],
          ["Message", <a href={`/dashboard/messages/${encodeURIComponent(f.messageId)}`}>{f.messageId}</a>],
          ["What failed", `HTTP ${f.failStatus}`],
          ["Its response", f.responseStatus === undefined ? "—" : `HTTP ${f.responseStatus}`],
          ["Next attempt", <Time at={f.nextDeliveryTime} now={now} />],
        ]}
      />
      <pre>{f.failResponse}</pre>
    </section>
  );
};

function show(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return text.length > 20_000 ? `${text.slice(0, 20_000)}\n…` : text;
}
