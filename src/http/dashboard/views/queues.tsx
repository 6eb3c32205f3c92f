/** Queues by name, 50 a page: lag, parallelism, paused; pause and resume (domain/queues/queues.ts). */
import { type Context, Hono } from "hono";
import { queuePage, setQueuePaused } from "../../../domain/queues/queues";
import { Badge, BY_NAME_PAGE_SIZE, ByNamePager, Live, PauseToggle, Time } from "../components";
import type { DashboardEnv } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, placeFields, placeOf } from "../params";

const PATH = "/dashboard/queues";

/** `GET /dashboard/queues`, `POST /dashboard/queues/:name/pause|resume`. */
export function queueRoutes(deps: PageDeps) {
  const pause = (paused: boolean) => async (c: Context<DashboardEnv>) => {
    const name = c.req.param("name")!;
    await deps.sql.begin((tx) => setQueuePaused(tx, name, paused));
    return doneRedirect(c, linkTo(PATH, placeOf(c.get("form"))), paused ? "paused" : "resumed", name);
  };
  return new Hono<DashboardEnv>()
    .get("/queues", async (c) => {
      const after = first(pageParams(c, ["after", ...NOTICE_PARAMS]), "after");
      // An action on this page comes back to it.
      const place = placeFields({ after, search: null });
      const page = await queuePage(deps.sql, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const queues = page.items;
      const viewer = c.get("viewer");
      const now = nowOf(deps);
      return c.html(
        <Layout frame={frameOf(deps, c)} title="Queues" section="queues" notice={noticeOf(c)}>
          <h1>Queues</h1>
          <Live url={linkTo(PATH, { after })}>
            {queues.length === 0 ? (
              <p class="muted">No queues yet. A publish to /v2/enqueue/&lt;queue&gt;/… or POST /v2/queues makes one.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Queue</th>
                    <th>State</th>
                    <th>Lag (messages not finished)</th>
                    <th>Parallelism</th>
                    <th>Changed</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {queues.map((q) => (
                    <tr id={q.name} data-queue={q.name}>
                      <td class="mono">
                        <a href={`/dashboard/messages?queueName=${encodeURIComponent(q.name)}`}>{q.name}</a>
                      </td>
                      <td>
                        <Badge state={q.paused ? "paused" : "active"} />
                      </td>
                      <td>{q.lag.toLocaleString("en-US")}</td>
                      <td>{q.parallelism}</td>
                      <td>
                        <Time at={q.updatedAt} now={now} />
                      </td>
                      <td>
                        <PauseToggle viewer={viewer} base={`/dashboard/queues/${encodeURIComponent(q.name)}`} paused={q.paused} fields={place} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <ByNamePager path={PATH} after={after} next={page.cursor} />
          </Live>
        </Layout>,
      );
    })
    .post("/queues/:name/pause", pause(true))
    .post("/queues/:name/resume", pause(false));
}
