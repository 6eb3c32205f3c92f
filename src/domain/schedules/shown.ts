/**
 * A schedule's configuration as a reader may see it: the publish options its
 * stored headers set (read as every tick reads them, domain/publish/options.ts),
 * and what each tick sends with what its `Redact-Fields` hide hidden. The API
 * answers it (`GET /v2/schedules/{id}`) and the dashboard's schedule page
 * shows it.
 */
import type { Redactor } from "../messages/redaction";
import { parsePublishOptions, type PublishLimits, type PublishOptions } from "../publish/options";
import type { ScheduleRow } from "./schedules";

/** What each tick publishes, redacted for showing. */
export interface ShownSchedule {
  options: PublishOptions;
  /** The headers delivered, Content-Type included. */
  headers: Record<string, string>;
  body: Buffer;
  /** The headers the callback and the failure callback forward; null without one. */
  callbackHeaders: Record<string, string> | null;
  failureCallbackHeaders: Record<string, string> | null;
}

/** The schedule's options, headers and body, with what it asks to hide hidden. */
export function shownSchedule(row: ScheduleRow, limits: PublishLimits, redactor: Redactor): ShownSchedule {
  const options = parsePublishOptions(row.headers, row.dialect, limits);
  const shown = redactor.message({
    dialect: row.dialect,
    headers: options.forwardHeaders,
    contentType: options.contentType,
    body: row.body,
    callbackHeaders: options.callback?.headers ?? null,
    failureCallbackHeaders: options.failureCallback?.headers ?? null,
    redactFields: options.redactFields,
  });
  const headers = { ...shown.headers, ...(shown.contentType !== null && { "Content-Type": shown.contentType }) };
  const { body, callbackHeaders, failureCallbackHeaders } = shown;
  return { options, headers, body, callbackHeaders, failureCallbackHeaders };
}
