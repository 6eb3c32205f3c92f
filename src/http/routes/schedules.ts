/** Schedules: create or replace, list, get, delete, pause, resume (docs/hosted-api.md §7). */
import { type Context, Hono } from "hono";
import { llmUrl } from "../../config/config";
import { canonicalHeaders } from "../../domain/headers/names";
import type { Redactor } from "../../domain/messages/redaction";
import { messageSettings, parsePublishOptions, type PublishLimits } from "../../domain/publish/options";
import {
  deleteSchedule,
  getSchedule,
  listSchedules,
  saveSchedule,
  type ScheduleRow,
  scheduleStates,
  setSchedulePaused,
} from "../../domain/schedules/schedules";
import { bodyOf } from "../body";
import type { AppDeps } from "../deps";
import { callerIp, rawDestination, requestHeaders } from "../request";
import { bodyFields, flowControlFields } from "../serialize";

/** Routes of the schedule resource, mounted at `/v2/schedules`. */
export function scheduleRoutes(deps: AppDeps) {
  const { sql } = deps;
  const settings = { ...messageSettings(deps.config), llmUrl: llmUrl(deps.config) };
  const now = () => new Date((deps.now ?? Date.now)());
  const show = async (rows: ScheduleRow[]) => {
    const states = await scheduleStates(sql, rows);
    return rows.map((row) => scheduleJson(row, states.get(row.id) ?? {}, deps.config, deps.redactor));
  };
  const pause = (paused: boolean) => async (c: Context) => {
    await sql.begin((tx) => setSchedulePaused(tx, c.req.param("id")!, paused, now()));
    return c.json({});
  };
  return new Hono()
    .get("/", async (c) => c.json(await show(await listSchedules(sql))))
    .get("/:id", async (c) => c.json((await show([await getSchedule(sql, c.req.param("id"))]))[0]))
    .delete("/:id", async (c) => {
      await sql.begin((tx) => deleteSchedule(tx, c.req.param("id")));
      return c.json({});
    })
    // The SDKs send PATCH; the hosted service's OpenAPI says POST (docs/hosted-api.md §7.2): both work.
    .on(["PATCH", "POST"], "/:id/pause", pause(true))
    .on(["PATCH", "POST"], "/:id/resume", pause(false))
    .post("/*", async (c) => {
      const request = {
        destination: rawDestination(c, "/v2/schedules/"),
        headers: requestHeaders(c).headers,
        body: bodyOf(c, deps.config.maxMessageBytes),
        callerIp: callerIp(c),
      };
      return c.json({ scheduleId: await sql.begin((tx) => saveSchedule(tx, request, settings, now())) });
    });
}

/** The Schedule object of the API, with what its Redact-Fields hide hidden. */
function scheduleJson(row: ScheduleRow, states: Record<string, string>, limits: PublishLimits, redactor: Redactor) {
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
  const header = { ...shown.headers, ...(shown.contentType !== null && { "Content-Type": shown.contentType }) };
  const flow = options.flowControl;
  return {
    scheduleId: row.id,
    cron: row.cron,
    createdAt: row.createdAt.getTime(),
    destination: row.destination,
    method: options.method,
    header: canonicalHeaders(header),
    ...bodyFields(shown.body),
    retries: options.retries,
    ...(options.delayMs > 0 && { delay: Math.round(options.delayMs / 1000) }),
    ...(options.timeoutMs !== null && { timeout: Math.round(options.timeoutMs / 1000) }),
    ...(options.retryDelayExpression !== null && { retryDelayExpression: options.retryDelayExpression }),
    ...(options.callback && { callback: options.callback.url, callbackHeader: canonicalHeaders(shown.callbackHeaders ?? {}) }),
    ...(options.failureCallback && {
      failureCallback: options.failureCallback.url,
      failureCallbackHeader: canonicalHeaders(shown.failureCallbackHeaders ?? {}),
    }),
    ...(row.callerIp !== null && { callerIP: row.callerIp, callerIp: row.callerIp }),
    isPaused: row.paused,
    ...(row.queueName !== null && { queueName: row.queueName }),
    ...flowControlFields(flow?.key ?? null, flow?.value ?? null),
    ...(options.labels.length > 0 && { label: options.labels[0], labels: options.labels }),
    ...(row.lastTickAt !== null && { lastScheduleTime: row.lastTickAt.getTime(), lastScheduleStates: states }),
    nextScheduleTime: row.nextTickAt.getTime(),
    ...(row.lastError !== null && { error: row.lastError }),
  };
}
