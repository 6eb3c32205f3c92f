/**
 * One run as its page shows it: the run log (logs.ts), and its timeline —
 * how long each step took and where each of its messages stands
 * (timeline.ts). Three queries (four when it invoked others), each through
 * an index: the run by `workflow_runs_run_id_idx`, its step list by
 * `workflow_steps_run_idx`, its messages by `messages_pkey` and their
 * attempts by `attempts_message_id_idx`.
 */
import type { Tx } from "../../../db/client";
import type { Redactor } from "../../messages/redaction";
import { readRunMaterial, type RunLog, runLogOf } from "./logs";
import { selectRunPage } from "./query";
import { type RunTimeline, runTimeline, selectMessageTimes } from "./timeline";

/** A run's log and timeline. */
export interface RunDetail {
  run: RunLog;
  timeline: RunTimeline;
}

/** The project's newest run with id `runId`, or null when there is none. */
export async function readRunDetail(tx: Tx, project: string, runId: string, redactor: Redactor): Promise<RunDetail | null> {
  const query = { filter: { workflowRunId: [runId] }, range: { fromDate: null, toDate: null }, cursor: null, count: 1 };
  const [row] = (await selectRunPage(tx, project, query)).runs;
  if (row === undefined) return null;
  const material = await readRunMaterial(tx, [row]);
  const entries = material.entries.get(row.pk)!;
  const times = await selectMessageTimes(tx, project, entries.map((entry) => entry.messageId));
  return { run: runLogOf(row, material, redactor), timeline: runTimeline(entries, times) };
}
