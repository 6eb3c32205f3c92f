/** Flow-control keys by name, 50 a page, narrowed by a search; pause and resume (domain/flow-control). */
import { Hono } from "hono";
import { setKeyPaused } from "../../../../domain/flow-control/admin";
import { keyStatePage } from "../../../../domain/flow-control/keys";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../components";
import type { DashboardEnv } from "../../env";
import { NOTICE_PARAMS } from "../../notices";
import { pageParams } from "../../params";
import { pauseRoutes } from "../../pause";
import { FLOW_CONTROL_PATH, FlowControlPage } from "./flow-control-page";

/** `GET /dashboard/flow-control`, `POST /dashboard/flow-control/:key/pause|resume`. */
export function flowControlRoutes(deps: AppDeps) {
  return new Hono<DashboardEnv>()
    .get("/flow-control", async (c) => {
      const params = pageParams(c, ["search", "after", ...NOTICE_PARAMS]);
      const [search, after] = [singleParam(params, "search") ?? "", singleParam(params, "after")];
      const page = await keyStatePage(deps.sql, search, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const props = { page, search, after, viewer: c.get("viewer") };
      return c.render(<FlowControlPage {...props} />, { title: "Flow control", section: "flow-control" });
    })
    .route("/flow-control", pauseRoutes(deps.sql, FLOW_CONTROL_PATH, "key", setKeyPaused));
}
