/** Schedules by id, 50 a page: cron, destination, next and last tick, what the last tick made; create, pause, resume, delete. */
import type { Dialect } from "../../../../db/vocabulary";
import type { PageOf } from "../../../../domain/paging";
import type { ScheduleRow as Schedule } from "../../../../domain/schedules/schedules";
import { Action, Badge, ByNamePager, Live, PauseToggle, Time } from "../../kit/components";
import { canAct, type Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { ActionForm, Choice, Field, Suggestions, TextArea } from "../../kit/inputs";
import { linkTo, messagePath, placeFields, schedulePath } from "../../kit/params";
import { DialectChoice } from "../publish/dialect-choice";
import { CONTENT_TYPES, METHOD_OPTIONS } from "../publish/publish-page";

export const SCHEDULES_PATH = "/dashboard/schedules";

/** The states of the messages a schedule's last tick made, by message id, by schedule id. */
type TickStates = Map<string, Record<string, string>>;

/** The page of schedules after `after` (null: the first page); `refusal` when the create form was refused. */
export const SchedulesPage = (props: {
  page: PageOf<Schedule>;
  states: TickStates;
  after: string | null;
  now: number;
  viewer: Viewer;
  /** The deployment's dialect, the create form's first choice. */
  dialect: Dialect;
  refusal: Refusal | null;
}) => {
  const { page, states, after, now, viewer, dialect, refusal } = props;
  // An action on this page comes back to it.
  const place = placeFields({ after, search: null });
  return (
    <>
      <h1>Schedules</h1>
      <CreateSchedule viewer={viewer} dialect={dialect} refusal={refusal} />
      <Live url={linkTo(SCHEDULES_PATH, { after })}>
        {page.items.length === 0 ? (
          <p class="muted">No schedules yet. Create one above, or POST /v2/schedules/&lt;destination&gt; with a Cron header.</p>
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
        <a href={schedulePath(s.id)}>{s.id}</a>
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
        <LastTick schedule={s} made={made} now={now} />
      </td>
      <td class="row-actions">
        <PauseToggle viewer={viewer} base={schedulePath(s.id)} paused={s.paused} fields={place} />
        <DeleteSchedule viewer={viewer} id={s.id} fields={place} />
      </td>
    </tr>
  );
};

/** When the last tick was, why it could not publish, and the states of what it made. */
export const LastTick = ({ schedule: s, made, now }: { schedule: Schedule; made: Record<string, string>; now: number }) => (
  <>
    <Time at={s.lastTickAt} now={now} />
    {s.lastError && <div class="error">{s.lastError}</div>}
    {Object.entries(made).map(([id, state]) => (
      <div>
        <a class="mono" href={messagePath(id)}>{id}</a> {state}
      </div>
    ))}
  </>
);

/** Deletes the schedule, asking first; `fields` say where to come back to. */
export const DeleteSchedule = ({ viewer, id, fields }: { viewer: Viewer; id: string; fields?: Record<string, string> }) => (
  <Action
    viewer={viewer}
    action={`${schedulePath(id)}/delete`}
    label="Delete"
    danger
    confirm={`Delete schedule ${id}? It publishes nothing more; the messages it made stay.`}
    fields={fields}
  />
);

/** The fields of `POST /v2/schedules/<destination>` that a schedule is mostly made with. */
const CreateSchedule = ({ viewer, dialect, refusal }: { viewer: Viewer; dialect: Dialect; refusal: Refusal | null }) => (
  canAct(viewer) && <details class="card" open={refusal?.form === "create-schedule"}>
    <summary>Create a schedule</summary>
    <ActionForm viewer={viewer} action={SCHEDULES_PATH} name="create-schedule" refusal={refusal} class="form">
      <fieldset>
        <Field name="destination" label="Destination" hint="an http(s) URL, or a URL group's name" size={40} required />
        <Field name="cron" label="Cron" hint="five fields, UTC; CRON_TZ=Europe/Berlin 0 9 * * * for a zone" size={18} required placeholder="*/5 * * * *" />
        <Field name="scheduleId" label="Schedule id (optional)" hint="made up when empty; an existing id is replaced" size={18} />
        <Field name="queue" label="Queue (optional)" size={14} />
      </fieldset>
      <fieldset>
        <Choice name="method" label="Method" options={METHOD_OPTIONS} value="POST" />
        <Field name="retries" label="Retries" hint="after the first attempt of each message" size={5} inputmode="numeric" />
        <Field name="delay" label="Delay" hint="after each tick, before the first attempt: 10s, 5m" size={6} />
        <DialectChoice deployment={dialect} />
      </fieldset>
      <fieldset>
        <Field name="contentType" label="Content-Type" hint="of every message it publishes; none when empty" size={24} list="content-types" />
        <TextArea
          name="headers"
          label="Headers, one a line"
          rows={3}
          hint="Name: value, delivered as given; an Upstash- (or Svc-) line sets any other publish option (Upstash-Timeout: 30s)"
        />
        <TextArea name="body" label="Body" rows={4} hint="the body of every message it publishes" />
      </fieldset>
      <Suggestions id="content-types" names={CONTENT_TYPES} />
      <button type="submit" class="primary">
        Create schedule
      </button>
    </ActionForm>
  </details>
);
