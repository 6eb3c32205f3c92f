/**
 * DLQ entries that are the failed step of a workflow run (the workflow DLQ's
 * entries, seen in the plain DLQ too), through a hook the DLQ owns:
 * workflows build on the DLQ, not the other way round. A plain retry of such
 * an entry resumes its run from the failed step, as the workflow DLQ's Resume
 * does: a bare copy of the step, without the run, would fail at the SDK
 * ("Couldn't get workflow id from header") and strand the run. The
 * workflows module installs it at start-up (`installWorkflowHooks`).
 */
import type { Tx } from "../../db/client";
import type { PublishResult } from "../messages/new-message";
import type { MessageSettings } from "../publish/options";
import type { Dialect } from "../../db/vocabulary";

/** Publish headers a retry gives to replace single settings of what it retries. */
export interface RetryOverrides {
  /** Request headers, lower-case names; only those with the dialect's prefix count. */
  headers: Record<string, string>;
  dialect: Dialect;
}

export interface RunEntries {
  /** Of `project`'s `dlqIds`, those that are the failed step of a workflow run. */
  ofRuns(tx: Tx, project: string, dlqIds: string[]): Promise<Set<string>>;
  /** Resumes the runs of those entries and removes them: by DLQ id, the message each run published again. */
  resume(tx: Tx, project: string, dlqIds: string[], overrides: RetryOverrides, settings: MessageSettings): Promise<Map<string, PublishResult>>;
}

/** Until workflows are installed: no entry belongs to a run. */
let hooks: RunEntries = {
  ofRuns: async () => new Set(),
  resume: async () => new Map(),
};

/** Installs the workflows' side (once, at start-up). */
export function installRunEntries(installed: RunEntries): void {
  hooks = installed;
}

/** The hooks in force. */
export const runEntries = (): RunEntries => hooks;
