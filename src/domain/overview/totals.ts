/**
 * The sizes the overview shows beside the message counts: the DLQ (counted
 * up to a bound, so a huge DLQ costs no more than `DLQ_COUNT_LIMIT` index
 * entries), and the queues, schedules and flow-control keys (small tables,
 * counted).
 */
import type { Tx } from "../../db/client";

/** Past this many entries the DLQ is shown as "at least". */
export const DLQ_COUNT_LIMIT = 100_000;

/** Counts of the things an operator keeps an eye on. */
export interface Totals {
  /** Entries in the DLQ, at most `DLQ_COUNT_LIMIT + 1`. */
  dlq: number;
  queues: number;
  pausedQueues: number;
  schedules: number;
  pausedSchedules: number;
  flowControlKeys: number;
  pausedFlowControlKeys: number;
}

/** The overview's totals. */
export async function readTotals(tx: Tx): Promise<Totals> {
  const [row] = await tx<Totals[]>`
    select
      (select count(*)::int from (select 1 from dispatch.dlq limit ${DLQ_COUNT_LIMIT + 1}) d) as dlq,
      (select count(*)::int from dispatch.queues) as queues,
      (select count(*)::int from dispatch.queues where paused) as "pausedQueues",
      (select count(*)::int from dispatch.schedules) as schedules,
      (select count(*)::int from dispatch.schedules where paused) as "pausedSchedules",
      (select count(*)::int from dispatch.flow_control_keys) as "flowControlKeys",
      (select count(*)::int from dispatch.flow_control_keys where paused) as "pausedFlowControlKeys"`;
  return row!;
}
