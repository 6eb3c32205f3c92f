/** URL groups by name, 50 a page, and their endpoints; add and remove endpoints (domain/url-groups/url-groups.ts). */
import { Hono } from "hono";
import { badRequest } from "../../../domain/errors";
import { addEndpoints, removeEndpoints, urlGroupPage } from "../../../domain/url-groups/url-groups";
import { Action, BY_NAME_PAGE_SIZE, ByNamePager, Live } from "../components";
import { canAct, type DashboardEnv, type Viewer } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, placeFields, placeOf } from "../params";

const PATH = "/dashboard/url-groups";

/** `GET /dashboard/url-groups`, `POST /dashboard/url-groups/endpoints/add|remove`. */
export function urlGroupRoutes(deps: PageDeps) {
  return new Hono<DashboardEnv>()
    .get("/url-groups", async (c) => {
      const after = first(pageParams(c, ["after", ...NOTICE_PARAMS]), "after");
      const page = await urlGroupPage(deps.sql, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const groups = page.items;
      const viewer = c.get("viewer");
      return c.html(
        <Layout frame={frameOf(deps, c)} title="URL groups" section="url-groups" notice={noticeOf(c)}>
          <h1>URL groups</h1>
          <AddEndpoint viewer={viewer} />
          <Live url={linkTo(PATH, { after })}>
            {groups.length === 0 && <p class="muted">No URL groups yet.</p>}
            {groups.map((group) => (
              <section class="card" id={group.name} data-url-group={group.name}>
                <h2>
                  <a href={`/dashboard/messages?topicName=${encodeURIComponent(group.name)}`}>{group.name}</a>{" "}
                  <span class="muted">({group.endpoints.length} endpoints)</span>
                </h2>
                <table>
                  <tbody>
                    {group.endpoints.map((endpoint) => (
                      <tr>
                        <td class="url">{endpoint.url}</td>
                        <td>{endpoint.name ?? <span class="muted">no name</span>}</td>
                        <td>
                          <Action
                            viewer={viewer}
                            action="/dashboard/url-groups/endpoints/remove"
                            fields={{ group: group.name, url: endpoint.url, ...placeFields({ after, search: null }) }}
                            label="Remove"
                            danger
                            confirm={`Remove ${endpoint.url} from ${group.name}?`}
                          />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
            ))}
            <ByNamePager path={PATH} after={after} next={page.cursor} />
          </Live>
        </Layout>,
      );
    })
    .post("/url-groups/endpoints/add", async (c) => {
      const form = c.get("form");
      const [group, url] = [required(form, "group"), required(form, "url")];
      const name = form.get("name")?.trim() || undefined;
      await deps.sql.begin((tx) => addEndpoints(tx, group, [{ url, name }]));
      return doneRedirect(c, PATH, "endpoint-added", group);
    })
    .post("/url-groups/endpoints/remove", async (c) => {
      const form = c.get("form");
      const [group, url] = [required(form, "group"), required(form, "url")];
      await deps.sql.begin((tx) => removeEndpoints(tx, group, [{ url }]));
      return doneRedirect(c, linkTo(PATH, placeOf(form)), "endpoint-removed", group);
    });
}

function required(form: Map<string, string>, name: string): string {
  const value = form.get(name)?.trim() ?? "";
  if (value === "") throw badRequest(`${name} is required`);
  return value;
}

const AddEndpoint = ({ viewer }: { viewer: Viewer }) =>
  canAct(viewer) ? (
    <form class="filters card" method="post" action="/dashboard/url-groups/endpoints/add">
      <input type="hidden" name="_csrf" value={viewer.csrf} />
      <label>
        URL group (new or existing)
        <input name="group" required size={16} />
      </label>
      <label>
        Endpoint URL
        <input name="url" required size={40} placeholder="https://…" />
      </label>
      <label>
        Endpoint name (optional)
        <input name="name" size={12} />
      </label>
      <button type="submit" class="primary">
        Add endpoint
      </button>
    </form>
  ) : null;
