/** Queues by name, 50 a page: lag, parallelism, paused; pause and resume. */
import type { PageOf } from "../../../../domain/paging";
import type { Queue } from "../../../../domain/queues/queues";
import { Badge, ByNamePager, Live, PauseToggle, Time } from "../../components";
import type { Viewer } from "../../env";
import { linkTo, placeFields } from "../../params";

export const QUEUES_PATH = "/dashboard/queues";

/** The page of queues after `after` (null: the first page). */
export const QueuesPage = ({ page, after, now, viewer }: { page: PageOf<Queue>; after: string | null; now: number; viewer: Viewer }) => {
  // An action on this page comes back to it.
  const place = placeFields({ after, search: null });
  return (
    <>
      <h1>Queues</h1>
      <Live url={linkTo(QUEUES_PATH, { after })}>
        {page.items.length === 0 ? (
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

const QueueRow = ({ queue: q, now, viewer, place }: { queue: Queue; now: number; viewer: Viewer; place: Record<string, string> }) => (
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
      <PauseToggle viewer={viewer} base={`${QUEUES_PATH}/${encodeURIComponent(q.name)}`} paused={q.paused} fields={place} />
    </td>
  </tr>
);
