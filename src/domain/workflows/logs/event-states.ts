/**
 * The states the `state` parameter of the run logs and events names
 * (docs/hosted-api.md §13.2): a run's (RUN_*) or a step's (STEP_*). An event
 * has one of them; in the run logs a run state selects runs in that state, a
 * step state runs that show such a step.
 */
import { RUN_STATES, type RunState } from "../../../db/vocabulary";
import { badRequest } from "../../errors";
import { STEP_STATES, type StepState } from "../step-states";

export const WORKFLOW_EVENT_STATES = [...RUN_STATES, ...STEP_STATES] as const;
export type WorkflowEventState = RunState | StepState;

/** The states `names` name (any case), or a 400 naming the unknown one. */
export function workflowEventStates(names: string[]): WorkflowEventState[] {
  return names.map((name) => {
    const upper = name.toUpperCase() as WorkflowEventState;
    if (!WORKFLOW_EVENT_STATES.includes(upper)) {
      throw badRequest(`unknown state "${name}"; use one of ${WORKFLOW_EVENT_STATES.join(", ")}`);
    }
    return upper;
  });
}

/** Whether `state` is a run's. */
export const isRunState = (state: WorkflowEventState): state is RunState => (RUN_STATES as readonly string[]).includes(state);
