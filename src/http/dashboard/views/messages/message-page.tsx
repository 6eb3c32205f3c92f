/**
 * A message's page: what was published (headers and body as the API shows
 * them, redaction applied), where it stands, its attempt timeline (each
 * attempt's time, duration, response status, headers and body, and the retry
 * it led to), what names it (DLQ entry, workflow run, callbacks), and cancel.
 */
import { canonicalHeaders } from "../../../../domain/headers/names";
import type { AttemptLog, MessageRelations } from "../../../../domain/messages/attempts";
import { type StoredMessage } from "../../../../domain/messages/message";
import { isPendingState } from "../../../../db/vocabulary";
import { Action, Badge, BodyBlock, bestView, type Fact, Facts, HeadersTable, Live, renderBody, Time } from "../../components";
import type { Viewer } from "../../env";
import type { BodyView } from "../../params";

/** A message (redacted), its attempts and what names it. */
interface MessageView {
  message: StoredMessage;
  attempts: AttemptLog[];
  relations: MessageRelations;
}

/** The message (redacted), its attempts and its request; the body in `view` (null: the one it reads best in). */
export const MessagePage = (props: MessageView & { view: BodyView | null; now: number; viewer: Viewer; self: string }) => {
  const { message, attempts, relations, view, now, viewer, self } = props;
  const path = `/dashboard/messages/${encodeURIComponent(message.id)}`;
  return (
    <>
      <h1 class="mono">{message.id}</h1>
      <Live url={self}>
        <Summary message={message} relations={relations} now={now} viewer={viewer} path={path} />
        <h2>Attempts</h2>
        <Timeline message={message} attempts={attempts} now={now} />
      </Live>
      <h2>Request</h2>
      <HeadersTable
        headers={canonicalHeaders({ ...message.headers, ...(message.contentType !== null && { "Content-Type": message.contentType }) })}
      />
      <BodyBlock body={message.body} view={view} link={(v) => `${path}?body=${v}`} />
    </>
  );
};

const Summary = (props: { message: StoredMessage; relations: MessageRelations; now: number; viewer: Viewer; path: string }) => {
  const { message: m, relations, viewer, path } = props;
  return (
    <div class="card">
      <Facts items={facts(props)} />
      <div class="actions">
        {isPendingState(m.state) && (
          <Action viewer={viewer} action={`${path}/cancel`} label="Cancel message" danger confirm="Cancel this message? It will not be delivered." />
        )}
        {relations.dlqId !== null && (
          <Action viewer={viewer} action={`/dashboard/dlq/${encodeURIComponent(relations.dlqId)}/retry`} label="Retry from the DLQ" />
        )}
      </div>
    </div>
  );
};

/** Where the message stands, and what it names and what names it. */
const facts = ({ message: m, relations, now }: { message: StoredMessage; relations: MessageRelations; now: number }): Fact[] => [
  ["State", <Badge state={m.state} />],
  ["Destination", <span class="mono">{m.url}</span>],
  m.topicName !== null && ["URL group", <a href={`/dashboard/url-groups#${m.topicName}`}>{m.topicName}</a>],
  m.queueName !== null && ["Queue", <a href={`/dashboard/queues#${m.queueName}`}>{m.queueName}</a>],
  ["Method", m.method],
  ["Retries", `${m.retried} of ${m.maxRetries}${m.retryDelayExpression ? ` (delay: ${m.retryDelayExpression})` : ""}`],
  ["Created", <Time at={m.createdAt} now={now} />],
  [isPendingState(m.state) ? "Next attempt" : "Finished", <Time at={isPendingState(m.state) ? m.nextDeliveryAt : m.completedAt} now={now} />],
  (m.labels?.length ?? 0) > 0 && ["Labels", m.labels!.join(", ")],
  m.callback !== null && ["Callback", <span class="mono">{m.callback}</span>],
  m.failureCallback !== null && ["Failure callback", <span class="mono">{m.failureCallback}</span>],
  m.scheduleId !== null && ["Schedule", <a href="/dashboard/schedules">{m.scheduleId}</a>],
  m.sourceMessageId !== null && ["Callback of", <a href={`/dashboard/messages/${encodeURIComponent(m.sourceMessageId)}`}>{m.sourceMessageId}</a>],
  relations.dlqId !== null && ["DLQ entry", <a href={`/dashboard/dlq/${encodeURIComponent(relations.dlqId)}`}>{relations.dlqId}</a>],
  relations.workflowRunId !== null && ["Workflow run", <a href={`/dashboard/workflows/${encodeURIComponent(relations.workflowRunId)}`}>{relations.workflowRunId}</a>],
  relations.callbacks.length > 0 && [
    "Callbacks",
    <span>
      {relations.callbacks.map((cb) => (
        <a href={`/dashboard/messages/${encodeURIComponent(cb.id)}`}>
          {cb.id} ({cb.origin}, {cb.state}){" "}
        </a>
      ))}
    </span>,
  ],
];

/** Created, then each attempt, then what comes next. */
const Timeline = ({ message, attempts, now }: { message: StoredMessage; attempts: AttemptLog[]; now: number }) => (
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
        Next attempt <Time at={message.nextDeliveryAt} now={now} />
      </li>
    )}
  </ol>
);

/** One attempt: its result, response and what followed; the last one's response open. */
const Attempt = ({ attempt: a, number, last, now }: { attempt: AttemptLog; number: number; last: boolean; now: number }) => (
  <li class={a.result === "DELIVERED" ? "ok" : a.failure !== null ? "bad" : "warn"} data-attempt={number}>
    <strong>Attempt {number}</strong> <Badge state={a.result} />{" "}
    {a.responseStatus !== null ? <span class="mono">HTTP {a.responseStatus}</span> : <span class="muted">no response</span>} ·{" "}
    <Time at={a.startedAt} now={now} /> · took {a.durationMs} ms
    {a.error && <div class="error">{a.error}</div>}
    {a.nextAttemptAt && (
      <div>
        Retry due <Time at={a.nextAttemptAt} now={now} />
      </div>
    )}
    {a.failure && <div class="error">Failed for good: {a.failure}</div>}
    {a.note && <div class="muted">{a.note}</div>}
    {(a.responseHeaders !== null || a.responseBody !== null) && (
      <details open={last}>
        <summary>Response</summary>
        <HeadersTable headers={a.responseHeaders} />
        {a.responseBody !== null && a.responseBody.length > 0 ? (
          <pre>{renderBody(a.responseBody, bestView(a.responseBody))}</pre>
        ) : (
          <p class="muted">Empty body.</p>
        )}
      </details>
    )}
  </li>
);
