/**
 * The message list: filters (state, destination URL, URL group, queue,
 * flow-control key, label, time), newest first, a page at a time, refreshed
 * in place; each message with its last answer (status, and the first line of
 * the response body or error) and, once retried from the DLQ, its retry.
 */
import { MESSAGE_STATES } from "../../../../db/vocabulary";
import { type MessageListPage, type MessageSummary, SCAN_LIMIT } from "../../../../domain/messages/list";
import { Badge, ByTimePager, Live, Time, utc } from "../../kit/components";
import { FilterButtons, type FilterValues, RangeFilter, SinceFilter, StateFilter, TextFilters } from "../../kit/filters";
import { linkTo, messagePath } from "../../kit/params";
import { AnswerLine, StatusText } from "../../kit/answer-line";

const PATH = "/dashboard/messages";

/** The fields of the list's filter form, as the query names them. */
export const MESSAGE_FILTERS = ["state", "url", "topicName", "queueName", "flowControlKey", "label", "since", "from", "to"] as const;

const TEXT_FIELDS = [
  ["url", "Destination URL", 32],
  ["topicName", "URL group", 12],
  ["queueName", "Queue", 12],
  ["flowControlKey", "Flow-control key", 12],
  ["label", "Label", 12],
] as const;

/** A page of messages; `cursor` is this page's (null: the newest), `page.cursor` the next one's. */
export const MessagesPage = (props: { page: MessageListPage; values: FilterValues; cursor: string | null; now: number; self: string }) => {
  const { page, values, cursor, now, self } = props;
  const note =
    page.searchedTo === null
      ? undefined
      : `This page searched ${SCAN_LIMIT.toLocaleString("en-US")} messages, back to ${utc(page.searchedTo)}; older ones are on the next page.`;
  return (
    <>
      <h1>Messages</h1>
      <form class="filters" method="get" action={PATH}>
        <StateFilter states={MESSAGE_STATES} values={values} />
        <TextFilters fields={TEXT_FIELDS} values={values} />
        <SinceFilter label="Created" values={values} />
        <RangeFilter values={values} />
        <FilterButtons clear={PATH} />
      </form>
      <Live url={self}>
        <MessageTable items={page.items} now={now} back={self} />
        <ByTimePager path={PATH} values={values} cursor={cursor} next={page.cursor} note={note} />
      </Live>
    </>
  );
};

/**
 * Messages as a table; each links to its page, which links `back` here. The
 * table scrolls sideways in its own box when the window is narrower than it,
 * ids kept on one line.
 */
export const MessageTable = ({ items, now, back }: { items: MessageSummary[]; now: number; back: string }) =>
  items.length === 0 ? (
    <p class="muted">No messages match.</p>
  ) : (
    <div class="table-scroll">
      <table class="messages">
        <thead>
          <tr>
            <th>Message</th>
            <th>State</th>
            <th>Destination</th>
            <th>Retries</th>
            <th>Last answer</th>
            <th>Created</th>
            <th>Next attempt / finished</th>
          </tr>
        </thead>
        <tbody>
          {items.map((m) => (
            <MessageRow m={m} now={now} back={back} />
          ))}
        </tbody>
      </table>
    </div>
  );

const MessageRow = ({ m, now, back }: { m: MessageSummary; now: number; back: string }) => (
  <tr data-message-id={m.id}>
    <td class="mono id">
      <a href={linkTo(messagePath(m.id), { back })}>{m.id}</a>
      {m.retriedAs && <RetriedAs retry={m.retriedAs} />}
    </td>
    <td>
      <Badge state={m.state} />
    </td>
    <td class="url">
      {m.url}
      <Origin m={m} />
    </td>
    <td>
      {m.retried} of {m.maxRetries}
    </td>
    <td class="last-answer">
      {m.last === null ? (
        <span class="muted">no attempt yet</span>
      ) : (
        <>
          <StatusText status={m.last.status} />
          <AnswerLine answer={m.last} />
        </>
      )}
    </td>
    <td>
      <Time at={m.createdAt} now={now} />
    </td>
    <td>
      <NextOrFinished m={m} now={now} />
    </td>
  </tr>
);

/** When it finished; else when it is attempted next, or, in a paused queue, that it waits for the queue's resume. */
const NextOrFinished = ({ m, now }: { m: MessageSummary; now: number }) => {
  if (m.completedAt !== null) return <Time at={m.completedAt} now={now} />;
  if (m.queuePaused) return <span data-next="queue-resumed">when its queue is resumed</span>;
  return <Time at={m.nextDeliveryAt} now={now} />;
};

/** The retry a failed message's DLQ entry became, and how it stands. */
const RetriedAs = ({ retry }: { retry: NonNullable<MessageSummary["retriedAs"]> }) => (
  <div class="muted" data-retried-as={retry.id}>
    retried as <a href={messagePath(retry.id)}>{retry.id}</a>
    {retry.state && (
      <>
        {" "}
        <Badge state={retry.state} />
      </>
    )}
  </div>
);

/** Where a message came from, besides a plain publish. */
const Origin = ({ m }: { m: MessageSummary }) => {
  const parts = [
    m.topicName && `URL group ${m.topicName}${m.endpointName ? ` (${m.endpointName})` : ""}`,
    m.queueName && `queue ${m.queueName}`,
    m.flowControlKey && `flow-control key ${m.flowControlKey}`,
    m.scheduleId && `schedule ${m.scheduleId}`,
    m.origin !== "publish" && m.origin.replace("_", " "),
    m.labels && m.labels.length > 0 && `labels ${m.labels.join(", ")}`,
  ].filter(Boolean);
  return parts.length === 0 ? null : <div class="muted">{parts.join(" · ")}</div>;
};
