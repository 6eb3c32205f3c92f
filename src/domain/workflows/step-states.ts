/**
 * The states a step of a run is shown in (docs/interface.md "Step",
 * docs/workflow-protocol.md §12): in the run logs' groups and "next" group,
 * and as the states of step events (docs/hosted-api.md §13.2).
 */

/** States of a step, as the hosted description names them. */
export const STEP_STATES = ["STEP_SUCCESS", "STEP_RETRY", "STEP_FAILED", "STEP_PROGRESS", "STEP_CANCELED"] as const;
export type StepState = (typeof STEP_STATES)[number];
