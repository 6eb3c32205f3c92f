/**
 * A schedule's page: its configuration, its next ticks, what its last tick
 * made, the messages it has made (newest first, paged, refreshed in place);
 * pause, resume, delete.
 */
import { type MessageListPage, SCAN_LIMIT } from "../../../../domain/messages/list";
import type { ScheduleRow as Schedule } from "../../../../domain/schedules/schedules";
import type { ShownSchedule } from "../../../../domain/schedules/shown";
import { Badge, BodyBlock, ByTimePager, type Fact, Facts, HeadersTable, Live, PauseToggle, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import { type BodyView, linkTo, schedulePath } from "../../kit/params";
import { MessageTable } from "../messages/messages-page";
import { DeleteSchedule, LastTick } from "./schedules-page";

/** Everything the page shows. */
export interface SchedulePageProps {
  schedule: Schedule;
  shown: ShownSchedule;
  ticks: Date[];
  /** The states of the messages the last tick made, by message id. */
  made: Record<string, string>;
  messages: MessageListPage;
  /** This page of messages' cursor (null: the newest). */
  cursor: string | null;
  view: BodyView | null;
  now: number;
  viewer: Viewer;
  self: string;
}

/** The whole page refreshes in place: a tick shows up, with its messages' states, as it happens. */
export const SchedulePage = (props: SchedulePageProps) => {
  const { schedule: s, shown, ticks, made, view, now, viewer, self } = props;
  const path = schedulePath(s.id);
  return (
    <Live url={self}>
      <h1>
        Schedule <span class="mono">{s.id}</span> <Badge state={s.paused ? "paused" : "active"} />
      </h1>
      <div class="actions">
        <PauseToggle viewer={viewer} base={path} paused={s.paused} fields={{ back: "schedule" }} />
        <DeleteSchedule viewer={viewer} id={s.id} />
      </div>
      <div class="columns">
        <section class="card">
          <h2>Configuration</h2>
          <Facts items={configuration(s, shown, now)} />
        </section>
        <section class="card">
          <h2>{s.paused ? "Ticks once resumed" : "Next ticks"}</h2>
          <ol class="ticks">
            {ticks.map((tick) => (
              <li>
                <Time at={tick} now={now} />
              </li>
            ))}
          </ol>
          <h2>Last tick</h2>
          <div data-last-tick>
            {s.lastTickAt === null ? <p class="muted">It has not ticked yet.</p> : <LastTick schedule={s} made={made} now={now} />}
          </div>
        </section>
      </div>
      <section class="card">
        <h2>What every tick publishes</h2>
        <HeadersTable headers={shown.headers} />
        <BodyBlock body={shown.body} view={view} link={(v) => linkTo(path, { body: v })} />
      </section>
      <MadeMessages {...props} />
    </Live>
  );
};

function configuration(s: Schedule, shown: ShownSchedule, now: number): Fact[] {
  const { options } = shown;
  const flow = options.flowControl;
  return [
    ["Cron", <span class="mono">{s.cron}</span>],
    ["Destination", <a class="mono" href={messagesTo(s.destination)} title="Messages to this destination">{s.destination}</a>],
    s.queueName !== null && ["Queue", <a href={linkTo("/dashboard/messages", { queueName: s.queueName })}>{s.queueName}</a>],
    ["Method", options.method],
    ["Retries", String(options.retries)],
    options.delayMs > 0 && ["Delay", `${options.delayMs / 1000} s`],
    options.timeoutMs !== null && ["Timeout", `${options.timeoutMs / 1000} s`],
    options.retryDelayExpression !== null && ["Retry delay", <span class="mono">{options.retryDelayExpression}</span>],
    options.callback !== null && ["Callback", <span class="mono">{options.callback.url}</span>],
    options.failureCallback !== null && ["Failure callback", <span class="mono">{options.failureCallback.url}</span>],
    flow !== null && ["Flow control", <span class="mono">{flow.key} {flow.value}</span>],
    options.labels.length > 0 && ["Labels", options.labels.join(", ")],
    ["Created", <Time at={s.createdAt} now={now} />],
    s.callerIp !== null && ["Created from", s.callerIp],
  ];
}

/** The message list of a destination: a URL, or a URL group's name. */
const messagesTo = (destination: string) =>
  linkTo("/dashboard/messages", /^https?:\/\//i.test(destination) ? { url: destination } : { topicName: destination });

/** The messages the schedule made, newest first, a page at a time, in the message list's table. */
const MadeMessages = ({ schedule, messages, cursor, now, self }: SchedulePageProps) => (
  <section class="card" id="made">
    <h2>Messages it made</h2>
    {messages.items.length === 0 ? (
      <p class="muted">{cursor === null && messages.cursor === null ? "None yet." : "None on this page."}</p>
    ) : (
      <MessageTable items={messages.items} now={now} back={self} />
    )}
    <ByTimePager
      path={schedulePath(schedule.id)}
      values={{}}
      cursor={cursor}
      next={messages.cursor}
      note={messages.searchedTo === null ? undefined : `This page searched ${SCAN_LIMIT.toLocaleString("en-US")} messages; older ones are on the next page.`}
    />
  </section>
);
