/**
 * Workflow runs, newest first, with the filters of `GET /v2/workflows/logs`,
 * ten runs a page, refreshed in place; a running run whose step waits out a
 * retry says so, with the step, its last error and when it is tried next.
 */
import { type NextStep, RUN_STATES, type RunLog } from "../../../../domain/workflows/logs/logs";
import { Badge, ByTimePager, Live, plural, Time } from "../../kit/components";
import { FilterButtons, type FilterValues, SinceFilter, StateFilter, TextFilters } from "../../kit/filters";
import { linkTo, runPath } from "../../kit/params";
import { errorHeadline } from "./step-error";

const PATH = "/dashboard/workflows";

/** The filter fields, as `GET /v2/workflows/logs` names them. */
export const RUN_FIELDS = ["workflowRunId", "workflowUrl", "state", "label", "messageId", "callerIp", "flowControlKey", "host", "path"] as const;

/** The query parameters of the list's filter form. */
export const RUN_FILTERS = [...RUN_FIELDS, "since", "from", "to"] as const;

const TEXT_FIELDS = [
  ["workflowRunId", "Run id", 18],
  ["workflowUrl", "Workflow URL", 28],
  ["label", "Label", 10],
  ["messageId", "Message id", 14],
  ["flowControlKey", "Flow-control key", 10],
  ["callerIp", "Caller IP", 10],
  ["host", "Host", 10],
  ["path", "Path", 10],
] as const;

/** A page of runs; `cursor` is this page's, `next` the next one's. */
export const RunsPage = (props: { runs: RunLog[]; values: FilterValues; cursor: string | null; next: string | null; now: number; self: string }) => {
  const { runs, values, cursor, next, now, self } = props;
  // A run's page links back to this page of the list, with its filters.
  const back = linkTo(PATH, values, { cursor });
  return (
    <>
      <h1>Workflow runs</h1>
      <form class="filters" method="get" action={PATH}>
        <StateFilter states={RUN_STATES} values={values} />
        <TextFilters fields={TEXT_FIELDS} values={values} />
        <SinceFilter label="Created" values={values} />
        <FilterButtons clear={PATH} />
      </form>
      <Live url={self}>
        {runs.length === 0 ? (
          <p class="muted">No workflow runs match.</p>
        ) : (
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th>Run</th>
                  <th>State</th>
                  <th>Workflow URL</th>
                  <th>Steps</th>
                  <th>Created</th>
                  <th>Finished</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((run) => (
                  <RunRow run={run} now={now} back={back} />
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ByTimePager path={PATH} values={values} cursor={cursor} next={next} />
      </Live>
    </>
  );
};

const RunRow = ({ run, now, back }: { run: RunLog; now: number; back: string }) => (
  <tr data-run-id={run.workflowRunId}>
    <td class="mono id">
      <a href={linkTo(runPath(run.workflowRunId), back === PATH ? {} : { back })}>{run.workflowRunId}</a>
    </td>
    <td>
      <Badge state={run.workflowState} />
      <Retrying run={run} now={now} />
    </td>
    <td class="url">{run.workflowUrl}</td>
    <td>{run.steps.reduce((n, group) => n + group.steps.length, 0)}</td>
    <td>
      <Time at={run.workflowRunCreatedAt} now={now} />
    </td>
    <td>
      <Time at={run.workflowRunCompletedAt} now={now} />
    </td>
  </tr>
);

/** The steps of a running run that wait out a retry after a failed attempt (its log's "next" steps in STEP_RETRY). */
const retryingSteps = (run: RunLog): NextStep[] =>
  run.workflowState !== "RUN_STARTED"
    ? []
    : run.steps.flatMap((group) => (group.type === "next" ? group.steps.filter((step) => step.state === "STEP_RETRY") : []));

/** "retrying step “charge card”", its attempts so far, when it is tried next, and its last error; nothing for a run with no such step. */
const Retrying = ({ run, now }: { run: RunLog; now: number }) => {
  const [step, ...more] = retryingSteps(run);
  if (step === undefined) return null;
  const failed = step.errors?.length ?? 0;
  const last = step.errors?.at(-1);
  return (
    <div class="retrying" data-retrying={step.messageId}>
      <span class="badge warn">retrying</span> {step.stepName === undefined ? "a step" : <>step “{step.stepName}”</>}
      {failed > 0 && <span class="muted"> · failed {plural(failed, "attempt")} of {step.retries + 1}</span>}
      {step.nextDeliveryTime !== undefined && (
        <span class="muted">
          {" "}
          · next <Time at={step.nextDeliveryTime} now={now} />
        </span>
      )}
      {more.length > 0 && <span class="muted"> · and {plural(more.length, "more step")}</span>}
      {last && (
        <div class="answer bad" title={errorHeadline(last)}>
          {errorHeadline(last)}
        </div>
      )}
    </div>
  );
};
