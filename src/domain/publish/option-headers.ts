/**
 * The publish options a header sets, by name after the dialect's prefix
 * (`Svc-Retries` or `Upstash-Retries`), with what each does. `parsePublishOptions`
 * reads a header only by a name listed here, so this table is every option
 * there is, and the API document lists it as the publish headers.
 */
export const OPTION_HEADERS = {
  method: "HTTP method of the delivery: GET, HEAD, POST (default), PUT, PATCH, DELETE or OPTIONS.",
  timeout: "How long an attempt may take before it counts as failed: seconds, or a duration such as `30s` or `2m`.",
  retries: "Retries after a failed first attempt (0 for none); the configured default when absent.",
  "retry-delay": "Delay before each retry as an expression of `retried`, e.g. `pow(2, retried) * 1000` (ms); exponential backoff when absent.",
  "not-before": "Unix time in seconds before which the message is not delivered; wins over Delay.",
  delay: "Wait before the first attempt: a duration such as `10s`, `5m`, `2h` or `1d`.",
  callback: "URL called with the destination's answer once the message is delivered.",
  "failure-callback": "URL called with the last answer when every attempt failed.",
  "deduplication-id": "Messages with an id already seen within the deduplication window are accepted but not stored again (202).",
  "content-based-deduplication": "`true`: the deduplication id is a digest of the URL, method, content type, forwarded headers and body.",
  "header-forward": "`true`: every header without the prefix is forwarded to the destination (not Authorization or Content-Type).",
  label: "A label to filter logs, messages and the DLQ by.",
  "redact-fields": "What the API hides when it shows the message: `body`, `header` or `header[Name]`, comma-separated.",
  "flow-control-key": "Messages with the same key share the limits of Flow-Control-Value.",
  "flow-control-value": "Limits of the key: `parallelism=N`, `rate=N`, `period=D`, comma-separated.",
} as const;

/** A publish option's header name, after the prefix. */
export type OptionHeader = keyof typeof OPTION_HEADERS;

/** Headers read by family: every header starting with the name, after the prefix. */
export const OPTION_HEADER_FAMILIES = {
  "forward-": "`<prefix>Forward-X: v` is delivered as `X: v`; headers without the prefix are not forwarded unless `<prefix>Header-Forward: true`. `<prefix>Forward-Content-Type` sets the message's content type when no `Content-Type` is given.",
  "callback-": "`<prefix>Callback-X` sets option X of the callback message (e.g. `Callback-Retries`).",
  "failure-callback-": "`<prefix>Failure-Callback-X` sets option X of the failure callback message.",
  "workflow-": "Set by the workflow SDK on the messages of a run (docs/workflow-protocol.md).",
} as const;
