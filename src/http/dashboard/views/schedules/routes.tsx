/**
 * Schedules by id, 50 a page, and a schedule's own page; create, pause,
 * resume and delete (domain/schedules/schedules.ts), as the API's.
 */
import { redactorFor } from "../../../redactor-for";
import { type Context, Hono } from "hono";
import { listMessages } from "../../../../domain/messages/list";
import {
  deleteSchedule,
  getSchedule,
  saveSchedule,
  schedulePage,
  scheduleStates,
  setSchedulePaused,
} from "../../../../domain/schedules/schedules";
import { shownSchedule } from "../../../../domain/schedules/shown";
import type { AppDeps } from "../../../deps";
import { callerIp } from "../../../request";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../kit/components";
import type { DashboardEnv } from "../../env";
import { formAction, type Refusal, requiredField } from "../../kit/form";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { currentUrl, nowOf } from "../../kit/page";
import { bodyViewParam, linkTo, pageParams, placeOf, schedulePath } from "../../kit/params";
import { formBody, formDialect, formHeaders } from "../publish/request";
import { nextTicks } from "./next-ticks";
import { SchedulePage } from "./schedule-page";
import { SCHEDULES_PATH, SchedulesPage } from "./schedules-page";
import { publishSettings } from "../../../publish-settings";

/** The fields of the create form that set a schedule's headers (after the dialect's prefix). */
const SCHEDULE_FIELDS = { cron: "cron", scheduleId: "schedule-id", queue: "queue-name", method: "method", retries: "retries", delay: "delay" };

/** Messages of a schedule a page of its page shows. */
const MESSAGES_SHOWN = 10;

/** `GET|POST /dashboard/schedules`, `GET /dashboard/schedules/:id`, `POST /dashboard/schedules/:id/pause|resume|delete`. */
export function scheduleRoutes(deps: AppDeps) {
  const settings = publishSettings(deps);
  const show = async (c: Context<DashboardEnv>, after: string | null, refusal: Refusal | null = null) => {
    const page = await schedulePage(deps.sql, c.get("project"), { cursor: after, count: BY_NAME_PAGE_SIZE });
    const states = await scheduleStates(deps.sql, c.get("project"), page.items);
    const props = { page, states, after, now: nowOf(deps), viewer: c.get("viewer"), dialect: deps.config.defaultDialect, refusal };
    return c.render(<SchedulesPage {...props} />, { title: "Schedules", section: "schedules" });
  };
  return new Hono<DashboardEnv>()
    .get("/schedules", (c) => show(c, singleParam(pageParams(c, ["after", ...NOTICE_PARAMS]), "after")))
    .post(
      "/schedules",
      formAction("create-schedule", (c, refusal) => show(c, null, refusal), async (c, form) => {
        const request = {
          destination: requiredField(form, "destination"),
          headers: formHeaders(form, formDialect(form, deps.config.defaultDialect), SCHEDULE_FIELDS),
          body: formBody(form, deps.config.maxMessageBytes),
          callerIp: callerIp(c),
          project: c.get("project"),
        };
        const id = await deps.sql.begin((tx) => saveSchedule(tx, request, settings, new Date(nowOf(deps))));
        return doneRedirect(c, schedulePath(id), "schedule-saved", id);
      }),
    )
    .get("/schedules/:id", (c) => schedulePageOf(c, deps))
    .post("/schedules/:id/pause", (c) => setPaused(c, deps, true))
    .post("/schedules/:id/resume", (c) => setPaused(c, deps, false))
    .post("/schedules/:id/delete", async (c) => {
      const id = c.req.param("id");
      await deps.sql.begin((tx) => deleteSchedule(tx, c.get("project"), id));
      return doneRedirect(c, linkTo(SCHEDULES_PATH, placeOf(c.get("form"))), "schedule-deleted", id);
    });
}

/** A schedule's page: its configuration, next ticks, last tick and a page of the messages it made. */
async function schedulePageOf(c: Context<DashboardEnv>, deps: AppDeps): Promise<Response> {
  const params = pageParams(c, ["body", "cursor", ...NOTICE_PARAMS]);
  const [now, cursor, view] = [nowOf(deps), singleParam(params, "cursor"), bodyViewParam(params)];
  const schedule = await getSchedule(deps.sql, c.get("project"), c.req.param("id")!);
  const filter = { scheduleId: [schedule.id] };
  const messages = await listMessages(deps.sql, { project: schedule.project, states: null, filter, range: { fromDate: null, toDate: null }, cursor, count: MESSAGES_SHOWN });
  const made = (await scheduleStates(deps.sql, schedule.project, [schedule])).get(schedule.id) ?? {};
  const shown = shownSchedule(schedule, deps.config, redactorFor(c, deps.redactor));
  const props = { schedule, shown, ticks: nextTicks(schedule, new Date(now)), made, messages, cursor, view, now, viewer: c.get("viewer"), self: currentUrl(c) };
  const back = { href: SCHEDULES_PATH, label: "All schedules" };
  return c.render(<SchedulePage {...props} />, { title: `Schedule ${schedule.id}`, section: "schedules", back });
}

/**
 * Pauses or resumes a schedule, as the API's pause and resume; back to the
 * schedule's page when the form came from it (`back=schedule`), else to the
 * list's page it came from.
 */
async function setPaused(c: Context<DashboardEnv>, deps: AppDeps, paused: boolean): Promise<Response> {
  const [id, form] = [c.req.param("id")!, c.get("form")];
  await deps.sql.begin((tx) => setSchedulePaused(tx, c.get("project"), id, paused, new Date(nowOf(deps))));
  const back = form.get("back") === "schedule" ? schedulePath(id) : linkTo(SCHEDULES_PATH, placeOf(form));
  return doneRedirect(c, back, paused ? "paused" : "resumed", id);
}
