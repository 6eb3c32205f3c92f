/**
 * Selecting messages by the filters of bulk cancel, the DLQ and the logs
 * (docs/hosted-api.md §4, §8, §9): values of one field are OR-ed, fields are
 * AND-ed. A value that names nothing matches nothing.
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";

/** Fields a message can be filtered on. */
export const MESSAGE_FILTER_FIELDS = [
  "messageId",
  "url",
  "topicName",
  "scheduleId",
  "queueName",
  "label",
  "flowControlKey",
  "callerIp",
  "host",
  "path",
  "api",
] as const;

/** Accepted values per field; an absent field does not filter. */
export type MessageFilter = Partial<Record<(typeof MESSAGE_FILTER_FIELDS)[number], string[]>>;

/** An inclusive time window in Unix milliseconds; null ends are open. */
export interface TimeRange {
  fromDate: number | null;
  toDate: number | null;
}

/** List order, by time. */
export type Order = "earliestFirst" | "latestFirst";

// Scheme, optional user info, then the host (a bracketed IPv6 literal or a name).
const HOST = "^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]]*\\]|[^:/?#]*)";
const PATH = "^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)";

/** A condition on the messages row `m` that holds when `filter` matches it. */
export function matchMessages(tx: Tx, filter: MessageFilter): postgres.Fragment {
  const conditions: postgres.Fragment[] = [];
  const on = (values: string[] | undefined, condition: (values: string[]) => postgres.Fragment) => {
    if (values !== undefined) conditions.push(condition(values));
  };
  on(filter.messageId, (v) => tx`m.id = any(${v}::text[])`);
  on(filter.url, (v) => tx`m.url = any(${v}::text[])`);
  on(filter.topicName, (v) => tx`m.topic_name = any(${v}::text[])`);
  on(filter.scheduleId, (v) => tx`m.schedule_id = any(${v}::text[])`);
  on(filter.queueName, (v) => tx`m.queue_name = any(${v}::text[])`);
  on(filter.label, (v) => tx`m.labels && ${v}::text[]`);
  on(filter.flowControlKey, (v) => tx`m.flow_control_key = any(${v}::text[])`);
  on(filter.callerIp, (v) => tx`m.caller_ip = any(${v}::text[])`);
  on(filter.host, (v) => tx`lower(substring(m.url from ${HOST})) = any(${v.map((h) => h.toLowerCase())}::text[])`);
  on(filter.path, (v) => tx`coalesce(nullif(substring(m.url from ${PATH}), ''), '/') = any(${v}::text[])`);
  // `llm` for messages published to `api/llm` (the Go client's `Api` filter).
  on(filter.api, (v) => tx`m.api = any(${v}::text[])`);
  return conditions.reduce((all, condition) => tx`${all} and ${condition}`, tx`true`);
}

/** A condition that `column` (a timestamptz) lies within `range`. */
export function withinRange(tx: Tx, column: postgres.Fragment, range: TimeRange): postgres.Fragment {
  const from = range.fromDate === null ? tx`true` : tx`${column} >= ${new Date(range.fromDate)}`;
  // Inclusive of the whole last millisecond: the API shows times truncated to milliseconds.
  const to = range.toDate === null ? tx`true` : tx`${column} < ${new Date(range.toDate + 1)}`;
  return tx`${from} and ${to}`;
}
