/**
 * Flow-control keys by name, 50 a page, narrowed by a search; pause and
 * resume, pin, unpin and reset the rate (domain/flow-control/admin.ts), as
 * the API's `/v2/flowControl/{key}/…` do. Every action comes back to the
 * page it was taken on; a refused pin shows that page again with the error.
 */
import { type Context, Hono } from "hono";
import { pinKey, resetKeyRate, setKeyPaused, unpinKey } from "../../../../domain/flow-control/admin";
import type { FlowKey } from "../../../../domain/flow-control/keyed";
import { keyStatePage } from "../../../../domain/flow-control/keys";
import { parsePin } from "../../../../domain/flow-control/pin";
import { badRequest } from "../../../../domain/errors";
import type { Tx } from "../../../../db/client";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../kit/components";
import type { DashboardEnv } from "../../env";
import { formAction, type Refusal } from "../../kit/form";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { linkTo, type ListPlace, pageParams, placeOf } from "../../kit/params";
import { pauseRoutes } from "../../kit/pause";
import { FLOW_CONTROL_PATH, FlowControlPage } from "./flow-control-page";
import { pinFormName } from "./key-actions";

/** `GET /dashboard/flow-control`, `POST /dashboard/flow-control/:key/pause|resume|pin|unpin|reset-rate`. */
export function flowControlRoutes(deps: AppDeps) {
  const show = async (c: Context<DashboardEnv>, place: ListPlace, refusal: Refusal | null = null) => {
    const [search, after] = [place.search ?? "", place.after];
    const page = await keyStatePage(deps.sql, { project: c.get("project"), search }, { cursor: after, count: BY_NAME_PAGE_SIZE });
    const props = { page, search, after, viewer: c.get("viewer"), refusal };
    return c.render(<FlowControlPage {...props} />, { title: "Flow control", section: "flow-control" });
  };
  /** `POST :key/<action>`: `act` on the key in a transaction, then back to the page it was taken on saying `done`. */
  const keyAction = (done: string, act: (tx: Tx, key: FlowKey, form: Map<string, string>) => Promise<void>) =>
    async (c: Context<DashboardEnv>) => {
      const [key, form] = [c.req.param("key")!, c.get("form")];
      await deps.sql.begin((tx) => act(tx, { project: c.get("project"), key }, form));
      return doneRedirect(c, linkTo(FLOW_CONTROL_PATH, placeOf(form)), done, key);
    };
  const pin = keyAction("pinned", (tx, key, form) => pinKey(tx, key, parsePin(Object.fromEntries(form))));
  return new Hono<DashboardEnv>()
    .get("/flow-control", (c) => {
      const params = pageParams(c, ["search", "after", ...NOTICE_PARAMS]);
      return show(c, { search: singleParam(params, "search"), after: singleParam(params, "after") });
    })
    .post("/flow-control/:key/pin", (c) =>
      formAction(pinFormName(c.req.param("key")), (c, refusal) => show(c, placeOf(c.get("form")), refusal), pin)(c))
    .post("/flow-control/:key/unpin", keyAction("unpinned", (tx, key, form) => unpinKey(tx, key, unpinOf(form))))
    .post("/flow-control/:key/reset-rate", keyAction("rate-reset", resetKeyRate))
    .route("/flow-control", pauseRoutes(deps.sql, FLOW_CONTROL_PATH, "key", (tx, project, key, paused) => setKeyPaused(tx, { project, key }, paused)));
}

/** The form's `limit`: `parallelism` or `rate`. */
function unpinOf(form: Map<string, string>): { parallelism: boolean; rate: boolean } {
  const limit = form.get("limit");
  if (limit !== "parallelism" && limit !== "rate") throw badRequest(`limit must be parallelism or rate, got "${limit ?? ""}"`);
  return { parallelism: limit === "parallelism", rate: limit === "rate" };
}
