/**
 * Flow-control keys: limits, what counts against them, the wait list, pins;
 * pause and resume (domain/flow-control). Keys by name, 50 a page; a search
 * narrows them, and its pages page within the matches.
 */
import { type Context, Hono } from "hono";
import { setKeyPaused } from "../../../domain/flow-control/admin";
import { keyStatePage } from "../../../domain/flow-control/keys";
import { Badge, BY_NAME_PAGE_SIZE, ByNamePager, Live, PauseToggle } from "../components";
import type { DashboardEnv } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, placeFields, placeOf } from "../params";

const PATH = "/dashboard/flow-control";

/** `GET /dashboard/flow-control`, `POST /dashboard/flow-control/:key/pause|resume`. */
export function flowControlRoutes(deps: PageDeps) {
  const pause = (paused: boolean) => async (c: Context<DashboardEnv>) => {
    const key = c.req.param("key")!;
    await deps.sql.begin((tx) => setKeyPaused(tx, key, paused));
    return doneRedirect(c, linkTo(PATH, placeOf(c.get("form"))), paused ? "paused" : "resumed", key);
  };
  return new Hono<DashboardEnv>()
    .get("/flow-control", async (c) => {
      const params = pageParams(c, ["search", "after", ...NOTICE_PARAMS]);
      const search = first(params, "search") ?? "";
      const after = first(params, "after");
      // An action on this page comes back to it, search included.
      const place = placeFields({ after, search });
      const page = await keyStatePage(deps.sql, search, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const keys = page.items;
      const viewer = c.get("viewer");
      const limit = (n: number | null) => (n === null ? "no limit" : String(n));
      return c.html(
        <Layout frame={frameOf(deps, c)} title="Flow control" section="flow-control" notice={noticeOf(c)}>
          <h1>Flow-control keys</h1>
          <form class="filters" method="get" action={PATH}>
            <label>
              Key contains
              <input name="search" value={search} />
            </label>
            <button type="submit" class="primary">
              Search
            </button>
          </form>
          <Live url={linkTo(PATH, { search, after })}>
            {keys.length === 0 ? (
              <p class="muted">No flow-control keys{search ? " match" : " yet"}.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Key</th>
                    <th>State</th>
                    <th>Wait list</th>
                    <th>In flight / parallelism</th>
                    <th>Started in window / rate</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {keys.map((k) => (
                    <tr data-flow-control-key={k.key}>
                      <td class="mono">{k.key}</td>
                      <td>
                        <Badge state={k.paused ? "paused" : "active"} />
                        {(k.pinnedParallelism || k.pinnedRate) && <span class="muted"> pinned</span>}
                      </td>
                      <td>{k.waiting.toLocaleString("en-US")}</td>
                      <td>
                        {k.active} / {limit(k.parallelism)}
                      </td>
                      <td>
                        {k.window.length} / {limit(k.rate)} per {k.periodMs / 1000} s
                      </td>
                      <td>
                        <PauseToggle viewer={viewer} base={`/dashboard/flow-control/${encodeURIComponent(k.key)}`} paused={k.paused} fields={place} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <ByNamePager path={PATH} after={after} next={page.cursor} search={search} />
          </Live>
        </Layout>,
      );
    })
    .post("/flow-control/:key/pause", pause(true))
    .post("/flow-control/:key/resume", pause(false));
}
