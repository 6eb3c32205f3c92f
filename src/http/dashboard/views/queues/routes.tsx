/** Queues by name, 50 a page; pause and resume (domain/queues/queues.ts). */
import { Hono } from "hono";
import { queuePage, setQueuePaused } from "../../../../domain/queues/queues";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../components";
import type { DashboardEnv } from "../../env";
import { NOTICE_PARAMS } from "../../notices";
import { nowOf } from "../../page";
import { pageParams } from "../../params";
import { pauseRoutes } from "../../pause";
import { QUEUES_PATH, QueuesPage } from "./queues-page";

/** `GET /dashboard/queues`, `POST /dashboard/queues/:name/pause|resume`. */
export function queueRoutes(deps: AppDeps) {
  return new Hono<DashboardEnv>()
    .get("/queues", async (c) => {
      const after = singleParam(pageParams(c, ["after", ...NOTICE_PARAMS]), "after");
      const page = await queuePage(deps.sql, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const props = { page, after, now: nowOf(deps), viewer: c.get("viewer") };
      return c.render(<QueuesPage {...props} />, { title: "Queues", section: "queues" });
    })
    .route("/queues", pauseRoutes(deps.sql, QUEUES_PATH, "name", setQueuePaused));
}
