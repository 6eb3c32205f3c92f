/**
 * "Failing now": the destinations with the most error attempts in the last
 * hour (domain/overview/failing-now.ts), each with its latest answer and a
 * link to its messages.
 */
import type { FailingDestination } from "../../../../domain/overview/failing-now";
import { plural, Time } from "../../kit/components";
import { linkTo } from "../../kit/params";
import { AnswerLine, StatusText } from "../../kit/answer-line";

/** How many destinations the card lists. */
export const FAILING_SHOWN = 5;

/** The card: the failing destinations, most failures first, or a word that nothing fails. */
export const FailingNow = ({ destinations, now }: { destinations: FailingDestination[]; now: number }) => (
  <section class="card failing-now" data-card="failing-now">
    <h2>Failing now</h2>
    {destinations.length === 0 ? (
      <p class="muted">No attempt failed in the last hour.</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>Destination</th>
            <th>Errors, last hour</th>
            <th>Last answer</th>
            <th>Last error at</th>
          </tr>
        </thead>
        <tbody>
          {destinations.map((destination) => (
            <Row destination={destination} now={now} />
          ))}
        </tbody>
      </table>
    )}
  </section>
);

const Row = ({ destination: d, now }: { destination: FailingDestination; now: number }) => (
  <tr data-failing={d.url}>
    <td class="url">
      <a href={linkTo("/dashboard/messages", { url: d.url })}>{d.url}</a>
      {(d.topicName || d.queueName) && (
        <div class="muted">{[d.topicName && `URL group ${d.topicName}`, d.queueName && `queue ${d.queueName}`].filter(Boolean).join(" · ")}</div>
      )}
    </td>
    <td>
      {plural(d.failures, "error")} <span class="muted">({plural(d.messages, "message")})</span>
    </td>
    <td class="last-answer">
      <StatusText status={d.last.status} />
      <AnswerLine answer={d.last} />
    </td>
    <td>
      <Time at={d.lastAt} now={now} />
    </td>
  </tr>
);
