/** A DLQ entry's page: the failed message, its error and last response (headers, body); retry and delete. */
import type { DlqEntry } from "../../../../domain/dlq/dlq";
import type { StoredMessage } from "../../../../domain/messages/message";
import { Action, Badge, BodyBlock, Facts, HeadersTable, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import { type BodyView, dlqEntryPath, linkTo, messagePath, runPath } from "../../kit/params";

/** `entry`, whose `message` is shown redacted; `list` is the DLQ list it was opened from, kept in its own links. */
export const DlqEntryPage = (props: {
  entry: DlqEntry;
  message: StoredMessage;
  view: BodyView | null;
  list: string | null;
  now: number;
  viewer: Viewer;
}) => {
  const { entry, message, view, list, now, viewer } = props;
  const path = dlqEntryPath(entry.dlqId);
  const messageLink = messagePath(message.id);
  return (
    <>
      <h1 class="mono">{entry.dlqId}</h1>
      <div class="card">
        <Facts
          items={[
            ["Message", <a href={messageLink}>{message.id}</a>],
            ["Destination", <span class="mono">{message.url}</span>],
            ["State", <Badge state={message.state} />],
            ["Failed", <Time at={message.completedAt} now={now} />],
            ["Last response", entry.responseStatus === null ? "no response" : `HTTP ${entry.responseStatus}`],
            ["Error", entry.error ?? "—"],
            ...(entry.workflowRunId === null
              ? []
              : [["Workflow run", <a href={runPath(entry.workflowRunId)}>{entry.workflowRunId}</a>] as const]),
          ]}
        />
        {entry.workflowRunId !== null && (
          <p class="muted">
            This is the failed step of a workflow run: Retry resumes the run from this step, as a new run (as Resume does
            on the run's page); the failed run stays failed.
          </p>
        )}
        <div class="actions">
          <Action viewer={viewer} action={`${path}/retry`} label={entry.workflowRunId === null ? "Retry" : "Retry (resume the run)"} />
          <Action viewer={viewer} action={`${path}/delete`} label="Delete" danger confirm="Delete this DLQ entry?" />
        </div>
      </div>
      <h2>Last response</h2>
      <HeadersTable headers={entry.responseHeaders} />
      <BodyBlock body={entry.responseBody ?? Buffer.alloc(0)} view={view} link={(v) => linkTo(path, { body: v, back: list })} label="Response body" />
      <p>
        The request, and every attempt, are on the <a href={messageLink}>message's page</a>.
      </p>
    </>
  );
};
