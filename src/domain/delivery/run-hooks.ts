/**
 * What recording an outcome asks of the workflow run a message belongs to,
 * through a hook the delivery side owns: workflows build on delivery, not the
 * other way round. The workflows module installs it at start-up
 * (`installWorkflowHooks`, workflows/hooks.ts).
 */
import type { Tx } from "../../db/client";
import type { StoredMessage } from "../messages/message";
import type { MessageSettings } from "../publish/options";
import type { Attempt, Outcome } from "./attempt";

export interface RunHooks {
  /**
   * Locks the runs of those of `messages` that belong to one, in key order,
   * before their messages are locked: a transaction that takes a run and its
   * messages takes the run first (a failed step fails its run and cancels the
   * run's other steps; a cancelled run cancels its steps).
   */
  lockRuns(tx: Tx, messages: StoredMessage[]): Promise<void>;
  /** Fields a callback body of a workflow message carries besides the usual ones. */
  callbackFields(tx: Tx, message: StoredMessage, final: boolean): Promise<Record<string, unknown>>;
  /** Records a failure function's finished attempt on its run. */
  recordFailureFunction(tx: Tx, message: StoredMessage, attempt: Attempt, outcome: Outcome): Promise<void>;
  /** Whether a failed message fails its run. */
  failsRun(message: StoredMessage): boolean;
  /** Fails the run of a failed message, with its DLQ entry and failure callback. */
  failRun(
    tx: Tx,
    message: StoredMessage,
    attempt: Attempt,
    failed: { dlqId: string; failureCallbackId: string | null },
    settings: MessageSettings,
  ): Promise<void>;
}

/** Until workflows are installed: a message of a run is an error, not silently runless. */
const unbound = (message: StoredMessage) => {
  if (message.workflowRunPk !== null) {
    throw new Error("a workflow message needs the run hooks: call installWorkflowHooks() at start-up");
  }
};
const NO_RUNS: RunHooks = {
  lockRuns: async (_tx, messages) => messages.forEach(unbound),
  callbackFields: async (_tx, message) => (unbound(message), {}),
  recordFailureFunction: async (_tx, message) => unbound(message),
  failsRun: (message) => (unbound(message), false),
  failRun: async (_tx, message) => unbound(message),
};

let hooks: RunHooks = NO_RUNS;

/** Installs the workflows' run hooks (once, at start-up). */
export function installRunHooks(installed: RunHooks): void {
  hooks = installed;
}

/** The hooks in force. */
export const runHooks = (): RunHooks => hooks;
