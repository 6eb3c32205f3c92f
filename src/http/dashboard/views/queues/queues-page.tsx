/** Queues by name, 50 a page: lag, parallelism, paused; create (or change a queue's parallelism), pause, resume, delete. */
import type { PageOf } from "../../../../domain/paging";
import type { Queue } from "../../../../domain/queues/queues";
import { Action, Badge, ByNamePager, Live, PauseToggle, plural, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { ActionForm, Field } from "../../kit/inputs";
import { linkTo, placeFields } from "../../kit/params";

export const QUEUES_PATH = "/dashboard/queues";

/** The page of queues after `after` (null: the first page); `refusal` when the create form was refused. */
export const QueuesPage = (props: { page: PageOf<Queue>; after: string | null; now: number; viewer: Viewer; refusal: Refusal | null }) => {
  const { page, after, now, viewer, refusal } = props;
  // An action on this page comes back to it.
  const place = placeFields({ after, search: null });
  return (
    <>
      <h1>Queues</h1>
      <CreateQueue viewer={viewer} refusal={refusal} />
      <Live url={linkTo(QUEUES_PATH, { after })}>
        {page.items.length === 0 ? (
          <p class="muted">No queues yet. Create one above, or publish to /v2/enqueue/&lt;queue&gt;/….</p>
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
              {page.items.map((queue) => (
                <QueueRow queue={queue} now={now} viewer={viewer} place={place} />
              ))}
            </tbody>
          </table>
        )}
        <ByNamePager path={QUEUES_PATH} after={after} next={page.cursor} />
      </Live>
    </>
  );
};

const QueueRow = ({ queue: q, now, viewer, place }: { queue: Queue; now: number; viewer: Viewer; place: Record<string, string> }) => {
  const base = `${QUEUES_PATH}/${encodeURIComponent(q.name)}`;
  const waiting = q.lag === 0 ? "" : ` Its ${plural(q.lag, "message")} not finished are cancelled.`;
  return (
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
      <td class="row-actions">
        <PauseToggle viewer={viewer} base={base} paused={q.paused} fields={place} />
        <Action viewer={viewer} action={`${base}/delete`} label="Delete" danger confirm={`Delete queue ${q.name}?${waiting}`} fields={place} />
      </td>
    </tr>
  );
};

/** Name and parallelism; an existing name changes that queue's parallelism. */
const CreateQueue = ({ viewer, refusal }: { viewer: Viewer; refusal: Refusal | null }) => (
  <ActionForm viewer={viewer} action={QUEUES_PATH} name="create-queue" refusal={refusal} class="card form filters">
    <Field name="name" label="Queue name" size={20} required hint="letters, digits, . _ -" />
    <Field name="parallelism" label="Parallelism" value="1" size={5} inputmode="numeric" hint="deliveries in flight at once" />
    <button type="submit" class="primary">
      Create queue
    </button>
    <span class="muted">An existing queue's name changes its parallelism.</span>
  </ActionForm>
);
