/**
 * Notifying a workflow event (`POST /v2/notify/{eventId}`, or of one run):
 * the steps waiting for it, and the form that resumes them with its data.
 */
import type { WaiterView } from "../../../../domain/workflows/waits";
import { plural, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { ActionForm, Field, TextArea } from "../../kit/inputs";
import { PUBLISH_PATH } from "./publish-page";

export const EVENT_PATH = `${PUBLISH_PATH}/event`;

/** The event page: `eventId`'s waiting steps when one is named, and the notify form. */
export const EventPage = (props: { viewer: Viewer; eventId: string | null; waiters: WaiterView[]; now: number; refusal: Refusal | null }) => {
  const { viewer, eventId, waiters, now, refusal } = props;
  return (
    <>
      <h1>Notify a workflow event</h1>
      <p class="muted">
        A run's <code>waitForEvent</code> step waits for its event; notifying it resumes every step waiting (or, with a run id,
        that run's, which keeps the event for a wait still to come). What <code>POST /v2/notify/&lt;event&gt;</code> does.
      </p>
      <form class="filters" method="get" action={EVENT_PATH}>
        <label>
          Event id
          <input name="eventId" value={eventId ?? ""} size={24} />
        </label>
        <button type="submit">Show the steps waiting</button>
      </form>
      {eventId !== null && <Waiters eventId={eventId} waiters={waiters} now={now} />}
      <ActionForm viewer={viewer} action={EVENT_PATH} name="notify" refusal={refusal} title="Notify">
        <fieldset>
          <Field name="eventId" label="Event id" value={eventId ?? ""} size={24} required />
          <Field name="runId" label="Run id (optional)" hint="only this run; kept for its wait if it is not waiting yet" size={24} />
        </fieldset>
        <TextArea name="body" label="Data" rows={6} hint="the event's data, as the waiting step gets it" />
        <button type="submit" class="primary">
          Notify
        </button>
      </ActionForm>
    </>
  );
};

const Waiters = ({ eventId, waiters, now }: { eventId: string; waiters: WaiterView[]; now: number }) => (
  <section class="card">
    <h2>
      {plural(waiters.length, "step")} waiting for <span class="mono">{eventId}</span>
    </h2>
    {waiters.length > 0 && (
      <table>
        <thead>
          <tr>
            <th>Continues at</th>
            <th>Times out</th>
          </tr>
        </thead>
        <tbody>
          {waiters.map((waiter) => (
            <tr>
              <td class="url">{waiter.url}</td>
              <td>
                <Time at={waiter.deadline * 1000} now={now} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
);
