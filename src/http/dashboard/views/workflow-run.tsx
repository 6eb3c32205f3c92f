/**
 * A workflow run's page: its step timeline as the run logs build it
 * (domain/workflows/logs, redaction applied) — the initial step, sequential
 * steps and parallel groups, sleeps, waits, calls and invokes, what is under
 * way or failed, and the failure function — with cancel, and resume or
 * restart from the DLQ (domain/workflows/cancel.ts, dlq/resume.ts).
 */
import { type Context, Hono } from "hono";
import { AppError } from "../../../domain/errors";
import { messageSettings } from "../../../domain/publish/options";
import { cancelRuns } from "../../../domain/workflows/cancel";
import { type NewRunMode, newRunFromDlqEntry } from "../../../domain/workflows/dlq/resume";
import { readRunOverrides } from "../../../domain/workflows/dlq/run-overrides";
import { listRunLogs, type NextStep, type RunLog } from "../../../domain/workflows/logs/logs";
import type { StepLog } from "../../../domain/workflows/logs/steps";
import { Action, Badge, Facts, HeadersTable, Live, Time } from "../components";
import type { DashboardEnv, Viewer } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { pageParams } from "../params";

/** `GET /dashboard/workflows/:runId` and its actions. */
export function workflowRunRoutes(deps: PageDeps) {
  const settings = messageSettings(deps.config);
  const newRun = (mode: NewRunMode) => async (c: Context<DashboardEnv>) => {
    const run = await findRun(deps, c.req.param("runId")!);
    if (run.dlqId === undefined) throw new AppError(404, `workflow run ${run.workflowRunId} is not in the DLQ`);
    const overrides = readRunOverrides({}, "upstash", deps.config);
    const started = await deps.sql.begin((tx) => newRunFromDlqEntry(tx, run.dlqId!, mode, overrides, settings));
    const path = `/dashboard/workflows/${encodeURIComponent(started.workflowRunId)}`;
    return doneRedirect(c, path, mode === "resume" ? "run-resumed" : "run-restarted", started.workflowRunId);
  };
  return new Hono<DashboardEnv>()
    .get("/workflows/:runId", async (c) => {
      pageParams(c, NOTICE_PARAMS);
      const run = await findRun(deps, c.req.param("runId"));
      const now = nowOf(deps);
      const path = `/dashboard/workflows/${encodeURIComponent(run.workflowRunId)}`;
      return c.html(
        <Layout frame={frameOf(deps, c)} title={run.workflowRunId} section="workflows" notice={noticeOf(c)}>
          <h1 class="mono">{run.workflowRunId}</h1>
          <Live url={path}>
            <RunSummary run={run} now={now} viewer={c.get("viewer")} path={path} />
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
        </Layout>,
      );
    })
    .post("/workflows/:runId/cancel", async (c) => {
      const runId = c.req.param("runId");
      const cancelled = await deps.sql.begin((tx) => cancelRuns(tx, { runIds: [runId] }, settings));
      if (cancelled === 0) throw new AppError(404, `workflow run ${runId} is not running`);
      return doneRedirect(c, `/dashboard/workflows/${encodeURIComponent(runId)}`, "run-cancelled", runId);
    })
    .post("/workflows/:runId/resume", newRun("resume"))
    .post("/workflows/:runId/restart", newRun("restart"));
}

/** The newest run with id `runId`, as the run logs show it. */
async function findRun(deps: PageDeps, runId: string): Promise<RunLog> {
  const query = { filter: { workflowRunId: [runId] }, range: { fromDate: null, toDate: null }, cursor: null, count: 1 };
  const { runs } = await deps.sql.begin("isolation level repeatable read read only", (tx) => listRunLogs(tx, query, deps.redactor));
  if (runs.length === 0) throw new AppError(404, `workflow run ${runId} not found`);
  return runs[0]!;
}

const tone = (steps: { state: string }[]) =>
  steps.some((step) => step.state === "STEP_FAILED") ? "bad" : steps.every((step) => step.state === "STEP_SUCCESS") ? "ok" : "warn";

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

/** One logged step, with the details of its type. */
const Step = ({ step, now }: { step: StepLog; now: number }) => (
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
    {step.callUrl !== undefined && (
      <div>
        Calls <span class="mono">{step.callMethod} {step.callUrl}</span> → HTTP {step.callResponseStatus}
        <details>
          <summary>Call response</summary>
          <HeadersTable headers={step.callResponseHeaders} />
          <pre>{step.callResponseBody}</pre>
        </details>
      </div>
    )}
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
    {(step.errors ?? []).map((error) => (
      <div class="error">
        HTTP {error.status}: {error.error}
      </div>
    ))}
  </div>
);

/** What is under way, failed or cancelled. */
const NextSteps = ({ steps, now }: { steps: NextStep[]; now: number }) => (
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
          {(step.errors ?? []).map((error) => (
            <div class="error">
              HTTP {error.status}: {error.error}
            </div>
          ))}
        </div>
      </li>
    ))}
  </>
);

const FailureFunction = ({ run, now }: { run: RunLog; now: number }) => {
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
