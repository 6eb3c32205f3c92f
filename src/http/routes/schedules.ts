/** Schedules: create or replace, list, get, delete, pause, resume (docs/hosted-api.md §7). */
import { redactorFor } from "../redactor-for";
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { canonicalHeaders } from "../../domain/headers/names";
import type { Redactor } from "../../domain/messages/redaction";
import type { PublishLimits } from "../../domain/publish/options";
import {
  deleteSchedule,
  getSchedule,
  listSchedules,
  ONE_OFF_OPTIONS,
  saveSchedule,
  type ScheduleRow,
  scheduleStates,
  setSchedulePaused,
} from "../../domain/schedules/schedules";
import { shownSchedule } from "../../domain/schedules/shown";
import { bodyOf } from "../body";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { PUBLISH_HEADER_NOTE, publishHeaders } from "../openapi/parameters";
import { FLOW_CONTROL_FIELDS, headerMap, LABEL_FIELDS } from "../openapi/schemas";
import { callerIp, rawDestination, requestHeaders } from "../request";
import { bodyFields, flowControlFields } from "../serialize";
import { publishSettings } from "../publish-settings";

const SCHEDULE = v.object({
  scheduleId: v.string(),
  cron: v.string(),
  createdAt: v.number(),
  destination: v.string(),
  method: v.string(),
  header: headerMap,
  body: v.optional(v.pipe(v.string(), v.description("The body of every message, when it is UTF-8 text; absent when there is none."))),
  bodyBase64: v.optional(v.string()),
  retries: v.number(),
  delay: v.optional(v.pipe(v.number(), v.description("Wait before each message's first attempt, seconds."))),
  timeout: v.optional(v.pipe(v.number(), v.description("Per-attempt timeout, seconds."))),
  retryDelayExpression: v.optional(v.string()),
  callback: v.optional(v.string()),
  callbackHeader: v.optional(headerMap),
  failureCallback: v.optional(v.string()),
  failureCallbackHeader: v.optional(headerMap),
  callerIP: v.optional(v.pipe(v.string(), v.description("The address of the client that created it."))),
  isPaused: v.boolean(),
  queueName: v.optional(v.string()),
  ...FLOW_CONTROL_FIELDS,
  ...LABEL_FIELDS,
  lastScheduleTime: v.optional(v.pipe(v.number(), v.description("The last tick that published, Unix milliseconds."))),
  lastScheduleStates: v.optional(
    v.pipe(v.record(v.string(), v.picklist(["IN_PROGRESS", "SUCCESS", "FAIL"])), v.description("The last tick's messages by id, with how each is doing.")),
  ),
  nextScheduleTime: v.pipe(v.number(), v.description("The next tick, Unix milliseconds.")),
  error: v.optional(v.pipe(v.string(), v.description("Why the last tick could not publish."))),
});
const ID = { id: "The schedule's id." };

const SAVE = operation({
  summary: "Create or replace a schedule",
  description: [
    "Every tick of the cron expression publishes the request given here as a new message (to the queue of Svc-Queue-Name, if given).",
    "A tick missed while no worker ran is published once, late; the next one after that is on time.",
    PUBLISH_HEADER_NOTE,
  ].join("\n"),
  tag: "Schedules",
  access: "full-token",
  path: { destination: "An http(s) URL as is, or a URL group's name." },
  headers: [
    { name: "Svc-Cron", required: true, description: "Five-field cron expression, UTC unless prefixed `CRON_TZ=<IANA zone> `." },
    { name: "Svc-Schedule-Id", description: "The id to create or replace; a new one when absent." },
    { name: "Svc-Queue-Name", description: "Publish every tick to this queue." },
    ...publishHeaders(ONE_OFF_OPTIONS),
  ],
  body: { bytes: "The body of every message it publishes." },
  responses: { 200: { description: "The schedule's id.", json: v.object({ scheduleId: v.string() }) } },
  errors: [404, 412, 413],
});
const LIST = operation({
  summary: "List schedules",
  tag: "Schedules",
  access: "read",
  responses: { 200: { description: "The schedules.", json: v.array(SCHEDULE) } },
});
const GET = operation({
  summary: "Get a schedule",
  tag: "Schedules",
  access: "read",
  path: ID,
  responses: { 200: { description: "The schedule.", json: SCHEDULE } },
  errors: [404],
});
const DELETE = operation({
  summary: "Delete a schedule",
  description: "An id no schedule has changes nothing and answers 200, as every delete of a named resource does.",
  tag: "Schedules",
  access: "full-token",
  path: ID,
  responses: { 200: "Deleted (or there was none)." },
});
const PAUSE = operation({
  summary: "Pause a schedule",
  description: "Its ticks publish nothing until it is resumed. PATCH (what the SDKs send) and POST both work.",
  tag: "Schedules",
  access: "full-token",
  path: ID,
  responses: { 200: "Paused." },
  errors: [404],
});
const RESUME = operation({
  summary: "Resume a schedule",
  description: "The next tick after now publishes; missed ones do not. PATCH and POST both work.",
  tag: "Schedules",
  access: "full-token",
  path: ID,
  responses: { 200: "Resumed." },
  errors: [404],
});

/** Routes of the schedule resource, mounted at `/v2/schedules`. */
export function scheduleRoutes(deps: AppDeps) {
  const { sql } = deps;
  const settings = publishSettings(deps);
  const now = () => new Date((deps.now ?? Date.now)());
  const show = async (c: Context, rows: ScheduleRow[]) => {
    const states = await scheduleStates(sql, c.get("project"), rows);
    return rows.map((row) => scheduleJson(row, states.get(row.id) ?? {}, deps.config, redactorFor(c, deps.redactor)));
  };
  const pause = (paused: boolean) => async (c: Context) => {
    await sql.begin((tx) => setSchedulePaused(tx, c.get("project"), c.req.param("id")!, paused, now()));
    return c.json({});
  };
  return new Hono()
    .get("/", LIST.describe, async (c) => c.json(await show(c, await listSchedules(sql, c.get("project")))))
    .get("/:id", GET.describe, async (c) => c.json((await show(c, [await getSchedule(sql, c.get("project"), c.req.param("id"))]))[0]))
    .delete("/:id", DELETE.describe, async (c) => {
      await sql.begin((tx) => deleteSchedule(tx, c.get("project"), c.req.param("id")));
      return c.json({});
    })
    // The SDKs send PATCH; the hosted service's OpenAPI says POST (docs/hosted-api.md §7.2): both work.
    .on(["PATCH", "POST"], "/:id/pause", PAUSE.describe, pause(true))
    .on(["PATCH", "POST"], "/:id/resume", RESUME.describe, pause(false))
    .post("/*", SAVE.describe, async (c) => {
      const request = {
        destination: rawDestination(c, "/v2/schedules/"),
        headers: requestHeaders(c).headers,
        body: bodyOf(c, deps.config.maxMessageBytes),
        callerIp: callerIp(c),
        project: c.get("project"),
      };
      return c.json({ scheduleId: await sql.begin((tx) => saveSchedule(tx, request, settings, now())) });
    });
}

/** The Schedule object of the API, with what its Redact-Fields hide hidden. */
function scheduleJson(row: ScheduleRow, states: Record<string, string>, limits: PublishLimits, redactor: Redactor) {
  const shown = shownSchedule(row, limits, redactor);
  const { options } = shown;
  const flow = options.flowControl;
  return {
    scheduleId: row.id,
    cron: row.cron,
    createdAt: row.createdAt.getTime(),
    destination: row.destination,
    method: options.method,
    header: canonicalHeaders(shown.headers),
    // No body key for a schedule made without one, as the hosted service answers (the TypeScript client's test reads undefined).
    ...(row.body.length > 0 && bodyFields(shown.body)),
    retries: options.retries,
    ...(options.delayMs > 0 && { delay: Math.round(options.delayMs / 1000) }),
    ...(options.timeoutMs !== null && { timeout: Math.round(options.timeoutMs / 1000) }),
    ...(options.retryDelayExpression !== null && { retryDelayExpression: options.retryDelayExpression }),
    ...(options.callback && { callback: options.callback.url, callbackHeader: canonicalHeaders(shown.callbackHeaders ?? {}) }),
    ...(options.failureCallback && {
      failureCallback: options.failureCallback.url,
      failureCallbackHeader: canonicalHeaders(shown.failureCallbackHeaders ?? {}),
    }),
    ...(row.callerIp !== null && { callerIP: row.callerIp }),
    isPaused: row.paused,
    ...(row.queueName !== null && { queueName: row.queueName }),
    ...flowControlFields(flow?.key ?? null, flow?.value ?? null),
    ...(options.labels.length > 0 && { label: options.labels[0], labels: options.labels }),
    ...(row.lastTickAt !== null && { lastScheduleTime: row.lastTickAt.getTime(), lastScheduleStates: states }),
    nextScheduleTime: row.nextTickAt.getTime(),
    ...(row.lastError !== null && { error: row.lastError }),
  };
}
