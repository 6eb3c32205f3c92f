/**
 * The DLQ: entries newest first with filters (destination URL, URL group,
 * queue, label, response status, time), each with its last response (the
 * status and the first line of the receiver's body), and a selection to
 * retry or delete; below, the latest retries and how each stands.
 */
import type { DlqEntry } from "../../../../domain/dlq/dlq";
import type { DlqRetry } from "../../../../domain/dlq/retry-links";
import type { PageOf } from "../../../../domain/paging";
import { ByTimePager, Live, Time } from "../../components";
import { canAct, type Viewer } from "../../env";
import { FilterButtons, type FilterValues, RangeFilter, SinceFilter, TextFilters } from "../../filters";
import { dlqEntryPath, runPath } from "../../params";
import { AnswerLine, StatusText } from "../messages/answer-line";
import { RecentRetries } from "./recent-retries";

const PATH = "/dashboard/dlq";

/** The fields of the list's filter form, as the query names them. */
export const DLQ_FILTERS = ["url", "topicName", "queueName", "label", "responseStatus", "since", "from", "to"] as const;

const TEXT_FIELDS = [
  ["url", "Destination URL", 32],
  ["topicName", "URL group", 12],
  ["queueName", "Queue", 12],
  ["label", "Label", 12],
  ["responseStatus", "Response status", 6],
] as const;

/** What the list shows: a page of entries; `cursor` is this page's (null: the newest), `page.cursor` the next one's. */
interface DlqList {
  page: PageOf<DlqEntry>;
  /** The latest retries, newest first. */
  retries: DlqRetry[];
  values: FilterValues;
  cursor: string | null;
  now: number;
  viewer: Viewer;
  /** The page's own URL, which its live region fetches again. */
  self: string;
}

/** The filters, and the entries refreshed in place (held while some are ticked). */
export const DlqPage = (props: DlqList) => {
  const { page, retries, values, cursor, now, viewer, self } = props;
  return (
    <>
      <h1>Dead letter queue</h1>
      <form class="filters" method="get" action={PATH}>
        <TextFilters fields={TEXT_FIELDS} values={values} />
        <SinceFilter label="Entered the DLQ" values={values} />
        <RangeFilter values={values} />
        <FilterButtons clear={PATH} />
      </form>
      <Live url={self} holdWhileChecked>
        {canAct(viewer) ? <Selection entries={page.items} now={now} viewer={viewer} /> : <EntryTable entries={page.items} now={now} viewer={viewer} />}
        <ByTimePager path={PATH} values={values} cursor={cursor} next={page.cursor} />
        <RecentRetries retries={retries} now={now} />
      </Live>
    </>
  );
};

/** The entries with a checkbox each, and the buttons that retry or delete the ticked ones. */
const Selection = (props: { entries: DlqEntry[]; now: number; viewer: Viewer }) => (
  <form method="post" action="/dashboard/dlq/retry">
    <input type="hidden" name="_csrf" value={props.viewer.csrf} />
    <EntryTable {...props} />
    {props.entries.length > 0 && (
      <div class="actions">
        <button type="submit" class="primary">
          Retry selected
        </button>
        <button type="submit" class="danger" formaction="/dashboard/dlq/delete" data-confirm="Delete the selected entries?">
          Delete selected
        </button>
      </div>
    )}
  </form>
);

/** The entries, with a checkbox each for a viewer who may act. */
const EntryTable = (props: { entries: DlqEntry[]; now: number; viewer: Viewer }) =>
  props.entries.length === 0 ? (
    <p class="muted">The DLQ holds nothing that matches.</p>
  ) : (
    <table class="dlq">
      <thead>
        <tr>
          {canAct(props.viewer) && (
            <th>
              <input type="checkbox" data-select-all="dlqIds" aria-label="Select all" />
            </th>
          )}
          <th>Entry</th>
          <th>Destination</th>
          <th>Last response</th>
          <th>Failed</th>
        </tr>
      </thead>
      <tbody>
        {props.entries.map((entry) => (
          <EntryRow entry={entry} now={props.now} selectable={canAct(props.viewer)} />
        ))}
      </tbody>
    </table>
  );

const EntryRow = ({ entry, now, selectable }: { entry: DlqEntry; now: number; selectable: boolean }) => (
  <tr data-dlq-id={entry.dlqId}>
    {selectable && (
      <td>
        <input type="checkbox" name="dlqIds" value={entry.dlqId} aria-label={`Select ${entry.dlqId}`} />
      </td>
    )}
    <td class="mono">
      <a href={dlqEntryPath(entry.dlqId)}>{entry.dlqId}</a>
      <div class="muted">{entry.message.id}</div>
      {entry.workflowRunId !== null && (
        <div>
          step of workflow run <a href={runPath(entry.workflowRunId)}>{entry.workflowRunId}</a>
        </div>
      )}
    </td>
    <td class="url">{entry.message.url}</td>
    <td class="last-answer">
      <StatusText status={entry.responseStatus} />
      <AnswerLine answer={{ body: entry.responseBody, error: entry.error }} />
    </td>
    <td>
      <Time at={entry.message.completedAt} now={now} />
    </td>
  </tr>
);
