/**
 * A message's page: what was published (headers and body as the API shows
 * them, redaction applied), where it stands, its attempt timeline (each
 * attempt's time, duration, response status, headers and body, and the retry
 * it led to), what names it (DLQ entry, workflow run, callbacks), and cancel.
 */
import { Hono } from "hono";

import { AppError, badRequest } from "../../../domain/errors";
import { canonicalHeaders } from "../../../domain/headers/names";
import { type AttemptLog, listAttempts, messageRelations, type MessageRelations } from "../../../domain/messages/attempts";
import { cancelMessages } from "../../../domain/messages/cancel";
import { isPendingState, type StoredMessage } from "../../../domain/messages/message";
import { findMessage } from "../../../domain/messages/store";
import { Action, Badge, BodyBlock, type BodyView, bestView, Facts, HeadersTable, Live, renderBody, Time } from "../components";
import type { DashboardEnv, Viewer } from "../env";
import { Layout } from "../layout";
import { doneRedirect, NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { first, pageParams } from "../params";
import { currentUrl } from "./messages";

/** `GET /dashboard/messages/:id` and `POST /dashboard/messages/:id/cancel`. */
export function messageRoutes(deps: PageDeps) {
  return new Hono<DashboardEnv>()
    .get("/messages/:id", async (c) => {
      const id = c.req.param("id");
      const params = pageParams(c, ["body", ...NOTICE_PARAMS]);
      const view = bodyView(first(params, "body"));
      const found = await deps.sql.begin("isolation level repeatable read read only", async (tx) => {
        const message = await findMessage(tx, id);
        if (!message) return null;
        return { message, attempts: await listAttempts(tx, id), relations: await messageRelations(tx, id, message.workflowRunPk) };
      });
      if (!found) throw new AppError(404, `message ${id} not found`);
      const now = nowOf(deps);
      const shown = deps.redactor.message(found.message);
      const path = `/dashboard/messages/${encodeURIComponent(id)}`;
      return c.html(
        <Layout frame={frameOf(deps, c)} title={id} section="messages" notice={noticeOf(c)}>
          <h1 class="mono">{id}</h1>
          <Live url={currentUrl(c)}>
            <Summary message={shown} relations={found.relations} now={now} viewer={c.get("viewer")} path={path} />
            <h2>Attempts</h2>
            <Timeline message={shown} attempts={found.attempts} now={now} />
          </Live>
          <h2>Request</h2>
          <HeadersTable
            headers={canonicalHeaders({ ...shown.headers, ...(shown.contentType !== null && { "Content-Type": shown.contentType }) })}
          />
          <BodyBlock body={shown.body} view={view} link={(v) => `${path}?body=${v}`} />
        </Layout>,
      );
    })
    .post("/messages/:id/cancel", async (c) => {
      const id = c.req.param("id");
      const cancelled = await deps.sql.begin(async (tx) => {
        if (!(await findMessage(tx, id))) throw new AppError(404, `message ${id} not found`);
        return cancelMessages(tx, [id]);
      });
      return doneRedirect(c, `/dashboard/messages/${encodeURIComponent(id)}`, cancelled > 0 ? "cancelled" : "not-cancelled", id);
    });
}

function bodyView(text: string | null): BodyView | null {
  if (text === null) return null;
  if (text !== "text" && text !== "json" && text !== "hex") throw badRequest(`body must be text, json or hex, got "${text}"`);
  return text;
}

const Summary = (props: { message: StoredMessage; relations: MessageRelations; now: number; viewer: Viewer; path: string }) => {
  const { message: m, relations, now, viewer, path } = props;
  return (
    <div class="card">
      <Facts
        items={[
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
        ]}
      />
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

/** Created, then each attempt, then what comes next. */
const Timeline = ({ message, attempts, now }: { message: StoredMessage; attempts: AttemptLog[]; now: number }) => (
  <ol class="timeline">
    <li>
      <strong>Created</strong> <Time at={message.createdAt} now={now} />
    </li>
    {attempts.length === 0 && <li class="muted">No attempt logged yet.</li>}
    {attempts.map((a, index) => (
      <li class={a.result === "DELIVERED" ? "ok" : a.failure !== null ? "bad" : "warn"} data-attempt={index + 1}>
        <strong>Attempt {index + 1}</strong> <Badge state={a.result} />{" "}
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
          <details open={index === attempts.length - 1}>
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
    ))}
    {isPendingState(message.state) && (
      <li class="muted">
        Next attempt <Time at={message.nextDeliveryAt} now={now} />
      </li>
    )}
  </ol>
);
