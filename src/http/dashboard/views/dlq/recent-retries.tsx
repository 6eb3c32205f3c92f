/**
 * The latest DLQ retries (domain/dlq/retry-links.ts): a retried entry leaves
 * the DLQ, so this says what became of it — delivered, still being tried, or
 * failed again (and in the DLQ once more) — each with its links.
 */
import type { DlqRetry, LinkedMessage } from "../../../../domain/dlq/retry-links";
import { Badge, Time } from "../../kit/components";
import { dlqEntryPath, messagePath } from "../../kit/params";

/** How many retries the DLQ page shows. */
export const RECENT_RETRIES = 10;

/** The retries, newest first; nothing before the first. */
export const RecentRetries = ({ retries, now }: { retries: DlqRetry[]; now: number }) =>
  retries.length === 0 ? null : (
    <section>
      <h2>Retried from the DLQ</h2>
      <table class="retries">
        <thead>
          <tr>
            <th>Failed message</th>
            <th>Destination</th>
            <th>Retried</th>
            <th>Retry</th>
            <th>Now</th>
          </tr>
        </thead>
        <tbody>
          {retries.map((retry) => (
            <tr data-retried={retry.original}>
              <td class="mono">
                <a href={messagePath(retry.original)}>{retry.original}</a>
              </td>
              <td class="url">{retry.url}</td>
              <td>
                <Time at={retry.retriedAt} now={now} />
              </td>
              <td class="mono">
                <a href={messagePath(retry.retry.id)}>{retry.retry.id}</a>
              </td>
              <td>
                <Outcome retry={retry.retry} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );

/** "retried, delivered", "retrying", or "failed again" with its new entry. */
const Outcome = ({ retry }: { retry: LinkedMessage }) => {
  if (retry.state === null) return <span class="muted">no longer kept</span>;
  if (retry.state === "DELIVERED") return <span class="badge ok">retried, delivered</span>;
  if (retry.state === "FAILED") {
    return (
      <span>
        <Badge state="FAILED" /> failed again
        {retry.dlqId !== null && (
          <>
            {" "}
            · in the DLQ as <a href={dlqEntryPath(retry.dlqId)}>{retry.dlqId}</a>
          </>
        )}
      </span>
    );
  }
  return <Badge state={retry.state} />;
};
