/**
 * The DLQ: entries newest first with filters (destination URL, URL group,
 * queue, label, response status, time), each with its last response (the
 * status and the first line of the receiver's body) and, for a viewer who
 * may act, its own Retry and a checkbox: a selection to retry or delete;
 * below, the latest retries and how each stands.
 */
import type { DlqEntry } from "../../../../domain/dlq/dlq";
import type { DlqRetry } from "../../../../domain/dlq/retry-links";
import type { PageOf } from "../../../../domain/paging";
import { ByTimePager, Live, Time } from "../../kit/components";
import { canAct, type Viewer } from "../../env";
import { FilterButtons, type FilterValues, RangeFilter, SinceFilter, TextFilters } from "../../kit/filters";
import { dlqEntryPath, linkTo, runPath } from "../../kit/params";
import { AnswerLine, StatusText } from "../../kit/answer-line";
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
  // An entry's page leads back to this page of the list, with its filters.
  const back = linkTo(PATH, values, { cursor });
  const table = { entries: page.items, now, viewer, back };
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
        {canAct(viewer) ? <Selection {...table} /> : <EntryTable {...table} />}
        <ByTimePager path={PATH} values={values} cursor={cursor} next={page.cursor} />
        <RecentRetries retries={retries} now={now} />
      </Live>
    </>
  );
};

/** What the entries' table shows: the entries, for `viewer`, each linking `back` to this list. */
interface EntryTableProps {
  entries: DlqEntry[];
  now: number;
  viewer: Viewer;
  back: string;
}

/** The entries with a checkbox each, and the buttons that retry or delete the ticked ones. */
const Selection = (props: EntryTableProps) => (
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

/** The entries, with a checkbox and a Retry each for a viewer who may act. */
const EntryTable = (props: EntryTableProps) =>
  props.entries.length === 0 ? (
    <p class="muted">The DLQ holds nothing that matches.</p>
  ) : (
    <div class="table-scroll">
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
            {canAct(props.viewer) && <th></th>}
          </tr>
        </thead>
        <tbody>
          {props.entries.map((entry) => (
            <EntryRow entry={entry} now={props.now} selectable={canAct(props.viewer)} back={props.back} />
          ))}
        </tbody>
      </table>
    </div>
  );

const EntryRow = ({ entry, now, selectable, back }: { entry: DlqEntry; now: number; selectable: boolean; back: string }) => (
  <tr data-dlq-id={entry.dlqId}>
    {selectable && (
      <td>
        <input type="checkbox" name="dlqIds" value={entry.dlqId} aria-label={`Select ${entry.dlqId}`} />
      </td>
    )}
    <td class="mono id">
      <a href={linkTo(dlqEntryPath(entry.dlqId), back === PATH ? {} : { back })}>{entry.dlqId}</a>
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
    {selectable && (
      <td class="row-actions">
        <RowRetry entry={entry} />
      </td>
    )}
  </tr>
);

/**
 * The entry's Retry: a submit button of the selection's form (which carries
 * the session's CSRF token) posting to the entry's own retry, as the Retry
 * of its page does; the ticked boxes go along and are not read there.
 */
const RowRetry = ({ entry }: { entry: DlqEntry }) => {
  const label = entry.workflowRunId === null ? "Retry" : "Retry (resume the run)";
  return (
    <button type="submit" class="primary" formaction={`${dlqEntryPath(entry.dlqId)}/retry`} aria-label={`${label}: ${entry.dlqId}`}>
      {label}
    </button>
  );
};
