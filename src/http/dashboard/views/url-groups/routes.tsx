/** URL groups by name, 50 a page, and their endpoints; add and remove endpoints (domain/url-groups/url-groups.ts). */
import { Hono } from "hono";
import { badRequest } from "../../../../domain/errors";
import { addEndpoints, removeEndpoints, urlGroupPage } from "../../../../domain/url-groups/url-groups";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../components";
import type { DashboardEnv } from "../../env";
import { doneRedirect, NOTICE_PARAMS } from "../../notices";
import { linkTo, pageParams, placeOf } from "../../params";
import { URL_GROUPS_PATH, UrlGroupsPage } from "./url-groups-page";

/** `GET /dashboard/url-groups`, `POST /dashboard/url-groups/endpoints/add|remove`. */
export function urlGroupRoutes(deps: AppDeps) {
  return new Hono<DashboardEnv>()
    .get("/url-groups", async (c) => {
      const after = singleParam(pageParams(c, ["after", ...NOTICE_PARAMS]), "after");
      const page = await urlGroupPage(deps.sql, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const props = { page, after, viewer: c.get("viewer") };
      return c.render(<UrlGroupsPage {...props} />, { title: "URL groups", section: "url-groups" });
    })
    .post("/url-groups/endpoints/add", async (c) => {
      const form = c.get("form");
      const [group, url] = [required(form, "group"), required(form, "url")];
      const name = form.get("name")?.trim() || undefined;
      await deps.sql.begin((tx) => addEndpoints(tx, group, [{ url, name }]));
      // The group may sort onto any page: the first one.
      return doneRedirect(c, URL_GROUPS_PATH, "endpoint-added", group);
    })
    .post("/url-groups/endpoints/remove", async (c) => {
      const form = c.get("form");
      const [group, url] = [required(form, "group"), required(form, "url")];
      await deps.sql.begin((tx) => removeEndpoints(tx, group, [{ url }]));
      return doneRedirect(c, linkTo(URL_GROUPS_PATH, placeOf(form)), "endpoint-removed", group);
    });
}

/** A form field that must not be blank, trimmed. */
function required(form: Map<string, string>, name: string): string {
  const value = form.get(name)?.trim() ?? "";
  if (value === "") throw badRequest(`${name} is required`);
  return value;
}
