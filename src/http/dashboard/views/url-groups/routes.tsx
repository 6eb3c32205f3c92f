/**
 * URL groups by name, 50 a page, and their endpoints; add an endpoint (which
 * creates its group), remove one, delete a group (domain/url-groups/url-groups.ts), as the API's.
 */
import { type Context, Hono } from "hono";
import { addEndpoints, deleteUrlGroup, removeEndpoints, urlGroupPage } from "../../../../domain/url-groups/url-groups";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../kit/components";
import type { DashboardEnv } from "../../env";
import { formAction, optionalField, type Refusal, requiredField } from "../../kit/form";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { linkTo, pageParams, placeOf } from "../../kit/params";
import { URL_GROUPS_PATH, UrlGroupsPage } from "./url-groups-page";

/** `GET /dashboard/url-groups`, `POST /dashboard/url-groups/endpoints/add|remove`, `POST /dashboard/url-groups/:name/delete`. */
export function urlGroupRoutes(deps: AppDeps) {
  const show = async (c: Context<DashboardEnv>, after: string | null, refusal: Refusal | null = null) => {
    const page = await urlGroupPage(deps.sql, c.get("project"), { cursor: after, count: BY_NAME_PAGE_SIZE });
    const props = { page, after, viewer: c.get("viewer"), refusal };
    return c.render(<UrlGroupsPage {...props} />, { title: "URL groups", section: "url-groups" });
  };
  return new Hono<DashboardEnv>()
    .get("/url-groups", (c) => show(c, singleParam(pageParams(c, ["after", ...NOTICE_PARAMS]), "after")))
    .post(
      "/url-groups/endpoints/add",
      formAction("add-endpoint", (c, refusal) => show(c, null, refusal), async (c, form) => {
        const [group, url] = [requiredField(form, "group"), requiredField(form, "url")];
        await deps.sql.begin((tx) => addEndpoints(tx, c.get("project"), group, [{ url, name: optionalField(form, "name") ?? undefined }], deps.guard));
        // The group may sort onto any page: the first one.
        return doneRedirect(c, URL_GROUPS_PATH, "endpoint-added", group);
      }),
    )
    .post("/url-groups/endpoints/remove", async (c) => {
      const form = c.get("form");
      const [group, url] = [requiredField(form, "group"), requiredField(form, "url")];
      await deps.sql.begin((tx) => removeEndpoints(tx, c.get("project"), group, [{ url }]));
      return doneRedirect(c, linkTo(URL_GROUPS_PATH, placeOf(form)), "endpoint-removed", group);
    })
    .post("/url-groups/:name/delete", async (c) => {
      const name = c.req.param("name");
      await deps.sql.begin((tx) => deleteUrlGroup(tx, c.get("project"), name));
      return doneRedirect(c, linkTo(URL_GROUPS_PATH, placeOf(c.get("form"))), "url-group-deleted", name);
    });
}
