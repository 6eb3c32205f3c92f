/**
 * The sizes the overview shows beside the message counts: the DLQ, and the
 * queues, schedules and flow-control keys with how many are paused. Each is
 * counted up to a bound, so a huge table costs no more than that many rows
 * (the failed messages retried from the DLQ through `messages_retried_at_idx`)
 * (a key per tenant can make 100,000 flow-control keys); past it, the
 * overview says "at least".
 */
import type { Tx } from "../../db/client";

/** Past this many entries the DLQ is shown as "at least". */
export const DLQ_COUNT_LIMIT = 100_000;
/** Past this many, queues, schedules and keys (and the paused ones) are shown as "at least". */
export const TOTAL_COUNT_LIMIT = 10_000;

/** Counts of the things an operator keeps an eye on. */
export interface Totals {
  /** Entries in the DLQ, at most `DLQ_COUNT_LIMIT + 1`. */
  dlq: number;
  /** Failed messages whose DLQ entry was retried (their retry is what may still fail), at most `DLQ_COUNT_LIMIT + 1`. */
  retried: number;
  /** The others: each at most `TOTAL_COUNT_LIMIT + 1`. */
  queues: number;
  pausedQueues: number;
  schedules: number;
  pausedSchedules: number;
  flowControlKeys: number;
  pausedFlowControlKeys: number;
}

const WHERE = {
  all: (tx: Tx) => tx`true`,
  paused: (tx: Tx) => tx`paused`,
  retried: (tx: Tx) => tx`retried_as is not null`,
};

/** The overview's totals of `project`. */
export async function readTotals(tx: Tx, project: string): Promise<Totals> {
  const upTo = (table: string, which: "all" | "paused" | "retried", limit = TOTAL_COUNT_LIMIT) => tx`(
    select count(*)::int from (
      select 1 from ${tx(`dispatch.${table}`)} where project = ${project} and ${WHERE[which](tx)} limit ${limit + 1}) t)`;
  const [row] = await tx<Totals[]>`
    select
      ${upTo("dlq", "all", DLQ_COUNT_LIMIT)} as dlq,
      ${upTo("messages", "retried", DLQ_COUNT_LIMIT)} as retried,
      ${upTo("queues", "all")} as queues,
      ${upTo("queues", "paused")} as "pausedQueues",
      ${upTo("schedules", "all")} as schedules,
      ${upTo("schedules", "paused")} as "pausedSchedules",
      ${upTo("flow_control_keys", "all")} as "flowControlKeys",
      ${upTo("flow_control_keys", "paused")} as "pausedFlowControlKeys"`;
  return row!;
}
