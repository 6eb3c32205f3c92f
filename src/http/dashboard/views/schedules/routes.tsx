/** Schedules by id, 50 a page, and the states of what their last ticks made; pause and resume (domain/schedules). */
import { Hono } from "hono";
import type { Tx } from "../../../../db/client";
import { schedulePage, scheduleStates, setSchedulePaused } from "../../../../domain/schedules/schedules";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../components";
import type { DashboardEnv } from "../../env";
import { NOTICE_PARAMS } from "../../notices";
import { nowOf } from "../../page";
import { pageParams } from "../../params";
import { pauseRoutes } from "../../pause";
import { SCHEDULES_PATH, SchedulesPage } from "./schedules-page";

/** `GET /dashboard/schedules`, `POST /dashboard/schedules/:id/pause|resume`. */
export function scheduleRoutes(deps: AppDeps) {
  const setPaused = (tx: Tx, id: string, paused: boolean) =>
    setSchedulePaused(tx, id, paused, new Date(nowOf(deps)));
  return new Hono<DashboardEnv>()
    .get("/schedules", async (c) => {
      const after = singleParam(pageParams(c, ["after", ...NOTICE_PARAMS]), "after");
      const page = await schedulePage(deps.sql, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const states = await scheduleStates(deps.sql, page.items);
      const props = { page, states, after, now: nowOf(deps), viewer: c.get("viewer") };
      return c.render(<SchedulesPage {...props} />, { title: "Schedules", section: "schedules" });
    })
    .route("/schedules", pauseRoutes(deps.sql, SCHEDULES_PATH, "id", setPaused));
}
