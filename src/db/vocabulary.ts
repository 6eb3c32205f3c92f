/**
 * The words stored in state and kind columns, as typed unions; the CHECK
 * constraints in `schema.ts` are made from the same lists.
 */

/** Header dialect a message was published in: native `Svc-` or the hosted service's `Upstash-`. */
export const DIALECTS = ["svc", "upstash"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** A workflow message's role in its run (workflow-protocol.md §2.1); `callType` in the step list. */
export const WORKFLOW_CALL_TYPES = ["step", "toCallback", "fromCallback", "failureCall"] as const;
export type WorkflowCallType = (typeof WORKFLOW_CALL_TYPES)[number];
