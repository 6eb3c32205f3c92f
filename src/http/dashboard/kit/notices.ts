/**
 * What an action says once done: the action redirects back to its page with
 * `?done=<code>&ref=<id>`, and the page shows the sentence for the code. Codes
 * rather than sentences in the URL, so a link cannot put words in the page.
 */
import type { Context } from "hono";

const NOTICES: Record<string, string> = {
  cancelled: "Message cancelled:",
  "not-cancelled": "Nothing to cancel; the message had already finished:",
  retried: "Retried as a new message:",
  "retried-many": "Retried the selected entries:",
  deleted: "Deleted DLQ entry:",
  "deleted-many": "Deleted the selected DLQ entries:",
  paused: "Paused:",
  resumed: "Resumed:",
  pinned: "Limits pinned (the rate window starts again now):",
  unpinned: "Unpinned; later messages set the limit again:",
  "rate-reset": "Rate window reset:",
  "endpoint-added": "Endpoint added to",
  "endpoint-removed": "Endpoint removed from",
  published: "Published:",
  "published-group": "Published one message to each endpoint:",
  deduplicated: "Not published again: an earlier message has this deduplication id:",
  notified: "Notified event:",
  "queue-saved": "Queue saved:",
  "queue-deleted": "Queue deleted (what waited in it was cancelled):",
  "url-group-deleted": "URL group deleted:",
  "schedule-saved": "Schedule saved:",
  "schedule-deleted": "Schedule deleted:",
  "keys-rotated": "Signing keys rotated: the next key is now the current one.",
  "run-cancelled": "Workflow run cancelled:",
  "retried-now": "Due now, no longer waiting out its retry backoff:",
  "not-retried-now": "Nothing to hurry; the message is not waiting out a retry backoff:",
  "run-resumed": "Resumed as a new run:",
  "run-restarted": "Restarted as a new run:",
  "circuit-opened": "Circuit opened by hand; its messages wait until it is closed by hand:",
  "circuit-already-open": "Nothing to open; the circuit was already open by hand:",
  "circuit-closed": "Circuit closed; its waiting messages are attempted again:",
  "circuit-already-closed": "Nothing to close; the circuit was already closed:",
  "nothing-selected": "Nothing was selected.",
};

/** Redirects to `path` (a dashboard page) saying `code` about `ref`. */
export function doneRedirect(c: Context, path: string, code: keyof typeof NOTICES & string, ref = ""): Response {
  const url = new URL(path, "http://dashboard");
  url.searchParams.set("done", code);
  if (ref !== "") url.searchParams.set("ref", ref);
  return c.redirect(url.pathname + url.search, 303);
}

/** The notice a page shows for its `done`/`ref` parameters, or null. */
export function noticeOf(c: Context): string | null {
  const sentence = NOTICES[c.req.query("done") ?? ""];
  if (sentence === undefined) return null;
  return `${sentence} ${c.req.query("ref") ?? ""}`.trim();
}

/** The query parameters notices use, which every page accepts. */
export const NOTICE_PARAMS = ["done", "ref"] as const;
