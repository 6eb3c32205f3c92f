/** Schedules by id, 50 a page: cron, destination, next and last tick, what the last tick made; pause and resume (domain/schedules). */
import { type Context, Hono } from "hono";
import { schedulePage, scheduleStates, setSchedulePaused } from "../../../domain/schedules/schedules";
import { Badge, BY_NAME_PAGE_SIZE, ByNamePager, Live, PauseToggle, Time } from "../components";
import type { DashboardEnv } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, placeFields, placeOf } from "../params";

const PATH = "/dashboard/schedules";

/** `GET /dashboard/schedules`, `POST /dashboard/schedules/:id/pause|resume`. */
export function scheduleRoutes(deps: PageDeps) {
  const pause = (paused: boolean) => async (c: Context<DashboardEnv>) => {
    const id = c.req.param("id")!;
    await deps.sql.begin((tx) => setSchedulePaused(tx, id, paused, new Date(nowOf(deps))));
    return doneRedirect(c, linkTo(PATH, placeOf(c.get("form"))), paused ? "paused" : "resumed", id);
  };
  return new Hono<DashboardEnv>()
    .get("/schedules", async (c) => {
      const after = first(pageParams(c, ["after", ...NOTICE_PARAMS]), "after");
      // An action on this page comes back to it.
      const place = placeFields({ after, search: null });
      const page = await schedulePage(deps.sql, { cursor: after, count: BY_NAME_PAGE_SIZE });
      const schedules = page.items;
      const states = await scheduleStates(deps.sql, schedules);
      const viewer = c.get("viewer");
      const now = nowOf(deps);
      return c.html(
        <Layout frame={frameOf(deps, c)} title="Schedules" section="schedules" notice={noticeOf(c)}>
          <h1>Schedules</h1>
          <Live url={linkTo(PATH, { after })}>
            {schedules.length === 0 ? (
              <p class="muted">No schedules yet (POST /v2/schedules/&lt;destination&gt; with a Cron header makes one).</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Schedule</th>
                    <th>Cron</th>
                    <th>Destination</th>
                    <th>State</th>
                    <th>Next tick</th>
                    <th>Last tick</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {schedules.map((s) => (
                    <tr data-schedule={s.id}>
                      <td class="mono">
                        <a href={`/dashboard/messages?${new URLSearchParams({ url: s.destination })}`}>{s.id}</a>
                      </td>
                      <td class="mono">{s.cron}</td>
                      <td class="url">
                        {s.destination}
                        {s.queueName && <div class="muted">queue {s.queueName}</div>}
                      </td>
                      <td>
                        <Badge state={s.paused ? "paused" : "active"} />
                      </td>
                      <td>{s.paused ? <span class="muted">paused</span> : <Time at={s.nextTickAt} now={now} />}</td>
                      <td>
                        <Time at={s.lastTickAt} now={now} />
                        {s.lastError && <div class="error">{s.lastError}</div>}
                        {Object.entries(states.get(s.id) ?? {}).map(([id, state]) => (
                          <div>
                            <a class="mono" href={`/dashboard/messages/${encodeURIComponent(id)}`}>{id}</a> {state}
                          </div>
                        ))}
                      </td>
                      <td>
                        <PauseToggle viewer={viewer} base={`/dashboard/schedules/${encodeURIComponent(s.id)}`} paused={s.paused} fields={place} />
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
    .post("/schedules/:id/pause", pause(true))
    .post("/schedules/:id/resume", pause(false));
}
