/** `GET|POST /dashboard/publish/event`: the steps waiting for an event, and notifying it (domain/workflows/waits.ts), as the API's. */
import { type Context, Hono } from "hono";
import { messageSettings } from "../../../../domain/publish/options";
import { checkText, MAX_ID_BYTES } from "../../../../domain/storable-text";
import { listWaiters, notify } from "../../../../domain/workflows/waits";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { plural } from "../../kit/components";
import type { DashboardEnv } from "../../env";
import { formAction, optionalField, type Refusal, requiredField } from "../../kit/form";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { nowOf } from "../../kit/page";
import { linkTo, pageParams } from "../../kit/params";
import { EVENT_PATH, EventPage } from "./event-page";
import { PUBLISH_PATH } from "./publish-page";
import { formBody } from "./request";

/** Mounted under `/dashboard/publish`. */
export function eventRoutes(deps: AppDeps) {
  const settings = messageSettings(deps.config);
  const show = async (c: Context<DashboardEnv>, refusal: Refusal | null, eventId: string | null) => {
    const waiters = eventId === null ? [] : await listWaiters(deps.sql, c.get("project"), eventId);
    const props = { viewer: c.get("viewer"), eventId, waiters, now: nowOf(deps), refusal };
    const back = { href: PUBLISH_PATH, label: "Publish a message" };
    return c.render(<EventPage {...props} />, { title: "Notify a workflow event", section: "publish", back });
  };
  return new Hono<DashboardEnv>()
    .get("/event", (c) => show(c, null, singleParam(pageParams(c, ["eventId", ...NOTICE_PARAMS]), "eventId")))
    .post(
      "/event",
      formAction("notify", (c, refusal) => show(c, refusal, null), async (c, form) => {
        const eventId = checkText(requiredField(form, "eventId", "the event id"), "the event id", MAX_ID_BYTES);
        const body = formBody(form, deps.config.maxMessageBytes);
        const resumed = await deps.sql.begin((tx) => notify(tx, c.get("project"), eventId, body, optionalField(form, "runId"), settings));
        const ref = `${eventId} (${plural(resumed.length, "waiting step")} resumed)`;
        return doneRedirect(c, linkTo(EVENT_PATH, { eventId }), "notified", ref);
      }),
    );
}
