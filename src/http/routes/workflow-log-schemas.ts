/**
 * What the run logs and the workflow events answer (docs/interface.md
 * "Workflow run log entry", docs/hosted-api.md §13.2), every field named:
 * the shapes of domain/workflows/logs (logs.ts, steps.ts, events.ts). Bodies
 * are optional wherever `trimBody=-1` may leave them out.
 */
import * as v from "valibot";
import { RUN_STATES } from "../../domain/workflows/logs/logs";
import { WORKFLOW_EVENT_STATES } from "../../domain/workflows/logs/event-states";
import { FAILURE_FUNCTION_STATES } from "../../domain/workflows/failure-function-state";
import { headerMap } from "../openapi/schemas";

const time = (what: string) => v.pipe(v.number(), v.description(`${what}, Unix milliseconds.`));
const text = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));
const CALL_TYPE = v.pipe(v.string(), v.description("The message's role in its run: step, toCallback, fromCallback or failureCall."));
const DELIVERY_STATE = v.picklist(["STEP_PROGRESS", "STEP_RETRY", "STEP_FAILED", "STEP_CANCELED"]);

/** One failed attempt of a message. */
const STEP_ERROR = v.object({
  error: v.string(),
  body: text("What the workflow answered."),
  headers: headerMap,
  status: v.number(),
  time: time("When"),
});

/** A step of a run, without its headers (a step event carries them itself). */
const STEP_FIELDS = {
  stepId: v.optional(v.pipe(v.number(), v.description("Absent on the Initial step."))),
  stepName: v.string(),
  stepType: v.pipe(v.string(), v.description("Initial, Run, SleepFor, SleepUntil, Call, Wait, Notify, Invoke, ...")),
  callType: CALL_TYPE,
  messageId: v.string(),
  out: v.optional(v.pipe(v.unknown(), v.description("The step's output, as the SDK wrote it (the Initial step: the run's input)."))),
  concurrent: v.number(),
  state: v.picklist(["STEP_SUCCESS", "STEP_FAILED"]),
  createdAt: time("Recorded"),
  retries: v.optional(v.number()),
  retryDelay: v.optional(v.string()),
  errors: v.optional(v.array(STEP_ERROR)),
  callUrl: v.optional(v.string()),
  callMethod: v.optional(v.string()),
  callHeaders: v.optional(headerMap),
  callBody: v.optional(v.string()),
  callResponseStatus: v.optional(v.number()),
  callResponseBody: v.optional(v.string()),
  callResponseHeaders: v.optional(headerMap),
  invokedWorkflowRunId: v.optional(v.string()),
  invokedWorkflowUrl: v.optional(v.string()),
  invokedWorkflowCreatedAt: v.optional(time("The invoked run's creation")),
  invokedWorkflowRunBody: v.optional(v.string()),
  invokedWorkflowRunHeaders: v.optional(headerMap),
  sleepFor: v.optional(v.pipe(v.number(), v.description("Milliseconds."))),
  sleepUntil: v.optional(time("Until")),
  waitEventId: v.optional(v.string()),
  waitTimeoutDuration: v.optional(v.string()),
  waitTimeoutDeadline: v.optional(time("The wait's deadline")),
  waitTimeout: v.optional(v.boolean()),
};
const STEP = v.object({ ...STEP_FIELDS, headers: headerMap });

/** A message of the run that has not finished well (the "next" group). */
const NEXT_STEP = v.object({
  messageId: v.string(),
  stepName: v.optional(v.string()),
  state: DELIVERY_STATE,
  retries: v.number(),
  retryDelay: v.optional(v.string()),
  nextDeliveryTime: v.optional(time("Next attempt")),
  errors: v.optional(v.array(STEP_ERROR)),
});

const STEP_GROUP = v.union([
  v.object({ type: v.picklist(["sequential", "parallel"]), steps: v.array(STEP) }),
  v.object({ type: v.literal("next"), steps: v.array(NEXT_STEP) }),
]);

const FAILURE_FUNCTION = v.object({
  messageId: v.string(),
  url: v.string(),
  state: v.picklist(FAILURE_FUNCTION_STATES),
  failHeaders: headerMap,
  failStatus: v.number(),
  failResponse: text("The failed step's answer."),
  dlqId: v.string(),
  errors: v.array(STEP_ERROR),
  responseBody: v.optional(v.string()),
  responseHeaders: v.optional(headerMap),
  responseStatus: v.optional(v.number()),
  nextDeliveryTime: v.optional(time("Next attempt")),
  maxRetries: v.number(),
});

const LABELS = {
  label: text("The first label (older clients read this one)."),
  labels: v.optional(v.array(v.string())),
};

/** A workflow run log entry. */
const RUN_LOG = v.object({
  workflowRunId: v.string(),
  workflowUrl: v.string(),
  workflowState: v.picklist(RUN_STATES),
  workflowRunCreatedAt: time("Created"),
  workflowRunCompletedAt: v.optional(time("Ended")),
  workflowRunResponse: text("The run's result."),
  workflowRunCallerIp: v.optional(v.string()),
  invoker: v.optional(v.object({ workflowRunId: v.string(), workflowUrl: v.string(), workflowRunCreatedAt: time("Created") })),
  ...LABELS,
  dlqId: v.optional(v.string()),
  flowControlKey: v.optional(v.string()),
  failureFunction: v.optional(FAILURE_FUNCTION),
  steps: v.pipe(v.array(STEP_GROUP), v.description("Step groups in order: sequential ones and parallel groups, then what is next.")),
});

/** A message delivering a step, as a step event tells of it. */
const DELIVERY_INFO = v.object({
  messageId: v.string(),
  callType: CALL_TYPE,
  state: DELIVERY_STATE,
  createdAt: time("Published"),
  retries: v.number(),
  retryDelay: v.optional(v.string()),
  stepName: v.optional(v.string()),
  nextDeliveryTime: v.optional(time("Next attempt")),
});

/** A workflow event (the hosted description's `WorkflowEvent`). */
const WORKFLOW_EVENT = v.object({
  time: time("When"),
  state: v.picklist(WORKFLOW_EVENT_STATES),
  workflowRunId: v.string(),
  workflowUrl: v.string(),
  workflowCreatedAt: time("The run's creation"),
  stepInfo: v.optional(v.union([v.object(STEP_FIELDS), DELIVERY_INFO])),
  nextDeliveryTime: v.optional(time("Next attempt (STEP_PROGRESS, STEP_RETRY)")),
  error: text("Why the attempt failed (STEP_RETRY, STEP_FAILED)."),
  responseStatus: v.optional(v.number()),
  responseBody: text("What the workflow answered the failed attempt."),
  responseHeaders: v.optional(headerMap),
  headers: v.optional(v.pipe(headerMap, v.description("The headers of the event's message (RUN_STARTED: the init message)."))),
  invokerWorkflowRunId: text("RUN_STARTED of an invoked run: the invoker."),
  invokerWorkflowUrl: v.optional(v.string()),
  invokerWorkflowCreatedAt: v.optional(time("The invoker's creation")),
  workflowRunResponse: text("RUN_SUCCESS: the run's result."),
  dlqId: text("RUN_FAILED: the run's DLQ entry."),
  ...LABELS,
  callerIp: v.optional(v.string()),
});

const CURSOR = v.optional(v.pipe(v.string(), v.description("The next page's cursor; absent on the last page.")));

/** A page of runs. */
export const RUN_PAGE = v.object({ runs: v.array(RUN_LOG), cursor: CURSOR });

/** A page of events. */
export const EVENT_PAGE = v.object({ events: v.array(WORKFLOW_EVENT), cursor: CURSOR });
