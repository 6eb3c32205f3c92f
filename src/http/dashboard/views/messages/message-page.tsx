/**
 * A message's page: what was published (headers and body as the API shows
 * them, redaction applied), where it stands, its attempt timeline (each
 * attempt's time, duration, response status, headers and body, and the retry
 * it led to), what names it (DLQ entry, workflow run, callbacks, the DLQ
 * retry it became or is), why it is waiting (why-waiting.tsx), and cancel.
 */
import { canonicalHeaders } from "../../../../domain/headers/names";
import type { LinkedMessage, RetryLinks } from "../../../../domain/dlq/retry-links";
import type { AttemptLog, MessageRelations } from "../../../../domain/messages/attempts";
import type { Hold } from "../../../../domain/messages/hold";
import { type StoredMessage } from "../../../../domain/messages/message";
import { isPendingState } from "../../../../db/vocabulary";
import { Action, Badge, BodyBlock, bestView, type Fact, Facts, HeadersTable, Live, renderBody, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import { type BodyView, dlqEntryPath, linkTo, messagePath, runPath, schedulePath } from "../../kit/params";
import { KeyLink } from "../flow-control/key-link";
import { NextAttempt, WhyWaiting } from "./why-waiting";
import { RetryNow } from "./retry-now";

/** A message (redacted), its attempts, what names it, its DLQ retry's links and what holds it. */
interface MessageView {
  message: StoredMessage;
  attempts: AttemptLog[];
  relations: MessageRelations;
  links: RetryLinks;
  hold: Hold;
}

/** What the page shows beside the message: the body's view, the clock, who looks, its own URL and the list it came from. */
interface PageContext {
  view: BodyView | null;
  now: number;
  viewer: Viewer;
  self: string;
  /** The list the page was opened from (a dashboard path), kept in its own links. */
  back: string | null;
}

/** The page's heading and document title: the message and where it goes. */
export const messageTitle = (message: StoredMessage) => `Message ${message.id} to ${message.url}`;

/** The message (redacted), its attempts and its request; the body in `view` (null: the one it reads best in). */
export const MessagePage = (props: MessageView & PageContext) => {
  const { message, attempts, relations, links, hold, view, now, viewer, self, back } = props;
  const path = messagePath(message.id);
  return (
    <>
      <h1>
        Message <span class="mono">{message.id}</span> <span class="muted">to</span> <span class="mono">{message.url}</span>
      </h1>
      <Live url={self}>
        <WhyWaiting hold={hold} now={now} />
        <Summary message={message} relations={relations} links={links} hold={hold} now={now} viewer={viewer} path={path} />
        <h2>Attempts</h2>
        <Timeline message={message} attempts={attempts} hold={hold} now={now} />
      </Live>
      <h2>Request</h2>
      <HeadersTable
        headers={canonicalHeaders({ ...message.headers, ...(message.contentType !== null && { "Content-Type": message.contentType }) })}
      />
      <BodyBlock body={message.body} view={view} link={(v) => linkTo(path, { body: v, back })} />
    </>
  );
};

const Summary = (props: { message: StoredMessage; relations: MessageRelations; links: RetryLinks; hold: Hold; now: number; viewer: Viewer; path: string }) => {
  const { message: m, relations, viewer, path } = props;
  return (
    <div class="card">
      <Facts items={facts(props)} />
      <div class="actions">
        {isPendingState(m.state) && (
          <Action viewer={viewer} action={`${path}/cancel`} label="Cancel message" danger confirm="Cancel this message? It will not be delivered." />
        )}
        <RetryNow viewer={viewer} message={m} now={props.now} />
        {relations.dlqId !== null && (
          <Action viewer={viewer} action={`${dlqEntryPath(relations.dlqId)}/retry`} label="Retry from the DLQ" />
        )}
      </div>
    </div>
  );
};

/** Where the message stands, and what it names and what names it. */
type FactsOf = { message: StoredMessage; relations: MessageRelations; links: RetryLinks; hold: Hold; now: number };
const facts = ({ message: m, relations, links, hold, now }: FactsOf): Fact[] => [
  ["State", <Badge state={m.state} />],
  ["Destination", <span class="mono">{m.url}</span>],
  m.topicName !== null && ["URL group", <a href={`/dashboard/url-groups#${m.topicName}`}>{m.topicName}</a>],
  m.queueName !== null && ["Queue", <a href={linkTo("/dashboard/messages", { queueName: m.queueName })}>{m.queueName}</a>],
  m.flowControlKey !== null && [
    "Flow-control key",
    <span>
      <KeyLink name={m.flowControlKey} /> {m.flowControlValue ? <span class="muted">({m.flowControlValue})</span> : null} ·{" "}
      <a href={linkTo("/dashboard/messages", { flowControlKey: m.flowControlKey })}>its messages</a>
    </span>,
  ],
  ["Method", m.method],
  ["Retries", `${m.retried} of ${m.maxRetries}${m.retryDelayExpression ? ` (delay: ${m.retryDelayExpression})` : ""}`],
  ["Created", <Time at={m.createdAt} now={now} />],
  isPendingState(m.state) ? ["Next attempt", <NextAttempt hold={hold} now={now} />] : ["Finished", <Time at={m.completedAt} now={now} />],
  (m.labels?.length ?? 0) > 0 && ["Labels", m.labels!.join(", ")],
  m.callback !== null && ["Callback", <span class="mono">{m.callback}</span>],
  m.failureCallback !== null && ["Failure callback", <span class="mono">{m.failureCallback}</span>],
  m.scheduleId !== null && ["Schedule", <a href={schedulePath(m.scheduleId)}>{m.scheduleId}</a>],
  m.sourceMessageId !== null && ["Callback of", <a href={messagePath(m.sourceMessageId)}>{m.sourceMessageId}</a>],
  links.retriedAs !== null && ["Retried as", <Linked message={links.retriedAs} />],
  links.retryOf !== null && ["Retry of", <Linked message={links.retryOf} />],
  relations.dlqId !== null && ["DLQ entry", <a href={dlqEntryPath(relations.dlqId)}>{relations.dlqId}</a>],
  relations.workflowRunId !== null && ["Workflow run", <a href={runPath(relations.workflowRunId)}>{relations.workflowRunId}</a>],
  relations.callbacks.length > 0 && [
    "Callbacks",
    <span>
      {relations.callbacks.map((cb) => (
        <a href={messagePath(cb.id)}>
          {cb.id} ({cb.origin}, {cb.state}){" "}
        </a>
      ))}
    </span>,
  ],
];

/** A message at the other end of a DLQ retry, with its state (and its DLQ entry, when it failed too). */
const Linked = ({ message }: { message: LinkedMessage }) => (
  <span data-linked={message.id}>
    <a class="mono" href={messagePath(message.id)}>
      {message.id}
    </a>{" "}
    {message.state === null ? <span class="muted">(no longer kept)</span> : <Badge state={message.state} />}
    {message.dlqId !== null && (
      <>
        {" "}
        in the DLQ as <a href={dlqEntryPath(message.dlqId)}>{message.dlqId}</a>
      </>
    )}
  </span>
);

/** Created, then each attempt, then what comes next. */
const Timeline = ({ message, attempts, hold, now }: { message: StoredMessage; attempts: AttemptLog[]; hold: Hold; now: number }) => (
  <ol class="timeline">
    <li>
      <strong>Created</strong> <Time at={message.createdAt} now={now} />
    </li>
    {attempts.length === 0 && <li class="muted">No attempt logged yet.</li>}
    {attempts.map((attempt, index) => (
      <Attempt attempt={attempt} number={index + 1} last={index === attempts.length - 1} now={now} />
    ))}
    {isPendingState(message.state) && (
      <li class="muted">
        Next attempt: <NextAttempt hold={hold} now={now} />
      </li>
    )}
  </ol>
);

/**
 * One attempt: its result and the response it got, then what followed (the
 * retry it led to, or its failure for good), so that nothing of the next
 * attempt comes before this one's response; the last one's response open.
 */
const Attempt = ({ attempt: a, number, last, now }: { attempt: AttemptLog; number: number; last: boolean; now: number }) => (
  <li class={a.result === "DELIVERED" ? "ok" : a.failure !== null ? "bad" : "warn"} data-attempt={number}>
    <strong>Attempt {number}</strong> <Badge state={a.result} />{" "}
    {a.responseStatus !== null ? <span class="mono">HTTP {a.responseStatus}</span> : <span class="muted">no response</span>} ·{" "}
    <Time at={a.startedAt} now={now} /> · took {a.durationMs} ms
    {a.error && <div class="error">{a.error}</div>}
    {(a.responseHeaders !== null || a.responseBody !== null) && (
      <details open={last} data-response={number}>
        <summary>Response to attempt {number}</summary>
        <HeadersTable headers={a.responseHeaders} />
        {a.responseBody !== null && a.responseBody.length > 0 ? (
          <pre>{renderBody(a.responseBody, bestView(a.responseBody))}</pre>
        ) : (
          <p class="muted">Empty body.</p>
        )}
      </details>
    )}
    {a.nextAttemptAt && (
      <div class="followed" data-followed="retry">
        Retry due <Time at={a.nextAttemptAt} now={now} />: attempt {number + 1}
      </div>
    )}
    {a.failure && <div class="error" data-followed="failure">Failed for good: {a.failure}</div>}
    {a.note && <div class="muted">{a.note}</div>}
  </li>
);
