/** Schedules by id, 50 a page: cron, destination, next and last tick, what the last tick made; pause and resume. */
import type { PageOf } from "../../../../domain/paging";
import type { ScheduleRow as Schedule } from "../../../../domain/schedules/schedules";
import { Badge, ByNamePager, Live, PauseToggle, Time } from "../../components";
import type { Viewer } from "../../env";
import { linkTo, placeFields } from "../../params";

export const SCHEDULES_PATH = "/dashboard/schedules";

/** The states of the messages a schedule's last tick made, by message id, by schedule id. */
type TickStates = Map<string, Record<string, string>>;

/** The page of schedules after `after` (null: the first page). */
export const SchedulesPage = (props: { page: PageOf<Schedule>; states: TickStates; after: string | null; now: number; viewer: Viewer }) => {
  const { page, states, after, now, viewer } = props;
  // An action on this page comes back to it.
  const place = placeFields({ after, search: null });
  return (
    <>
      <h1>Schedules</h1>
      <Live url={linkTo(SCHEDULES_PATH, { after })}>
        {page.items.length === 0 ? (
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
              {page.items.map((schedule) => (
                <ScheduleRow schedule={schedule} made={states.get(schedule.id) ?? {}} now={now} viewer={viewer} place={place} />
              ))}
            </tbody>
          </table>
        )}
        <ByNamePager path={SCHEDULES_PATH} after={after} next={page.cursor} />
      </Live>
    </>
  );
};

const ScheduleRow = (props: { schedule: Schedule; made: Record<string, string>; now: number; viewer: Viewer; place: Record<string, string> }) => {
  const { schedule: s, made, now, viewer, place } = props;
  return (
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
        {Object.entries(made).map(([id, state]) => (
          <div>
            <a class="mono" href={`/dashboard/messages/${encodeURIComponent(id)}`}>{id}</a> {state}
          </div>
        ))}
      </td>
      <td>
        <PauseToggle viewer={viewer} base={`${SCHEDULES_PATH}/${encodeURIComponent(s.id)}`} paused={s.paused} fields={place} />
      </td>
    </tr>
  );
};
