/** Schedules: cron, destination, next and last tick, what the last tick made; pause and resume (domain/schedules). */
import { type Context, Hono } from "hono";
import { listSchedules, scheduleStates, setSchedulePaused } from "../../../domain/schedules/schedules";
import { Badge, Live, PauseToggle, Time } from "../components";
import type { DashboardEnv } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { pageParams } from "../params";

/** `GET /dashboard/schedules`, `POST /dashboard/schedules/:id/pause|resume`. */
export function scheduleRoutes(deps: PageDeps) {
  const pause = (paused: boolean) => async (c: Context<DashboardEnv>) => {
    const id = c.req.param("id")!;
    await deps.sql.begin((tx) => setSchedulePaused(tx, id, paused, new Date(nowOf(deps))));
    return doneRedirect(c, "/dashboard/schedules", paused ? "paused" : "resumed", id);
  };
  return new Hono<DashboardEnv>()
    .get("/schedules", async (c) => {
      pageParams(c, NOTICE_PARAMS);
      const schedules = await listSchedules(deps.sql);
      const states = await scheduleStates(deps.sql, schedules);
      const viewer = c.get("viewer");
      const now = nowOf(deps);
      return c.html(
        <Layout frame={frameOf(deps, c)} title="Schedules" section="schedules" notice={noticeOf(c)}>
          <h1>Schedules</h1>
          <Live url="/dashboard/schedules">
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
                        <PauseToggle viewer={viewer} base={`/dashboard/schedules/${encodeURIComponent(s.id)}`} paused={s.paused} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Live>
        </Layout>,
      );
    })
    .post("/schedules/:id/pause", pause(true))
    .post("/schedules/:id/resume", pause(false));
}
