/**
 * A destination's row: its circuit in words (when it probes next and gives
 * up, or that it was opened by hand; a 429's hold), what it holds now, its
 * last minute of attempts, its last error and success; open or close its
 * circuit by hand (a full token), as `POST /v2/destinations/{destination}/open|close`.
 */
import type { Destination } from "../../../../domain/destinations/destinations";
import { Action, Badge, plural, Time } from "../../kit/components";
import type { Viewer } from "../../env";
import { AnswerLine, StatusText } from "../../kit/answer-line";
import { DESTINATIONS_PATH } from "../../kit/destination-link";

/** Where a destination's open and close forms post. */
export const destinationActionPath = (destination: string, action: "open" | "close") =>
  `${DESTINATIONS_PATH}/${encodeURIComponent(destination)}/${action}`;

export const DestinationRow = (props: { destination: Destination; now: number; viewer: Viewer; fields: Record<string, string> }) => {
  const { destination: d, now } = props;
  return (
    <tr id={d.destination} data-destination={d.destination}>
      <td class="mono">{d.destination}</td>
      <td class="circuit">
        <Badge state={d.circuit} />
        <Circuit destination={d} now={now} />
      </td>
      <td>{count(d.inFlight)}</td>
      <td>{count(d.due)}</td>
      <td>{count(d.waiting)}</td>
      <td class="last-minute">
        <LastMinute destination={d} />
      </td>
      <td>{d.averageMs === null ? <span class="muted">—</span> : `${count(d.averageMs)} ms`}</td>
      <td class="last-answer">
        {d.lastErrorAt === null ? (
          <span class="muted">none</span>
        ) : (
          <>
            <StatusText status={d.lastStatus} />
            <AnswerLine answer={{ body: null, error: d.lastError }} />
            <Time at={d.lastErrorAt} now={now} />
          </>
        )}
      </td>
      <td>
        <Time at={d.lastSuccessAt} now={now} />
      </td>
      <td class="row-actions">
        <CircuitActions {...props} />
      </td>
    </tr>
  );
};

/** What the circuit does now and next, a 429's hold, and what opened it. */
const Circuit = ({ destination: d, now }: { destination: Destination; now: number }) => (
  <>
    {d.circuit === "OPEN" && d.openedByHand && <div>opened by hand <Time at={d.openedAt} now={now} />; holds its messages until closed by hand</div>}
    {d.circuit === "OPEN" && !d.openedByHand && <div>probes <Time at={d.probeAt} now={now} /></div>}
    {d.circuit === "PROBING" && <div>a probe is under way and decides</div>}
    {d.giveUpAt !== null && <div>gives up <Time at={d.giveUpAt} now={now} /></div>}
    {d.circuit === "GAVE_UP" && (
      <div>
        gave up: its messages run out their own retries; one is sent for real <Time at={d.probeAt} now={now} />
      </div>
    )}
    {d.heldUntil !== null && d.heldUntil.getTime() > now && (
      <div data-held>
        held until <Time at={d.heldUntil} now={now} /> (a 429 asked for rest)
      </div>
    )}
    {d.openReason !== null && !d.openedByHand && <div class="muted">{d.openReason}</div>}
  </>
);

/** Attempts, error rate and failures by kind in the breaker's window. */
const LastMinute = ({ destination: d }: { destination: Destination }) => {
  if (d.attempts === 0) return <span class="muted">no attempts</span>;
  // Worded as what opened a circuit is ("12 timeouts, 3 × HTTP 503"), most first.
  const kinds = Object.entries(d.failureKinds)
    .sort(([, a], [, b]) => b - a)
    .map(([kind, n]) => (kind.startsWith("HTTP ") ? `${count(n)} × ${kind}` : `${count(n)} ${kind}`));
  return (
    <>
      {plural(d.attempts, "attempt")}, {Math.round((100 * d.failures) / d.attempts)} % errors
      {kinds.length > 0 && <div class="muted">{kinds.join(", ")}</div>}
    </>
  );
};

/** Close a circuit that is not closed; open one that is not open by hand already (asking first). */
const CircuitActions = ({ destination: d, viewer, fields }: { destination: Destination; viewer: Viewer; fields: Record<string, string> }) => (
  <>
    {d.circuit !== "CLOSED" && <Action viewer={viewer} action={destinationActionPath(d.destination, "close")} label="Close circuit" fields={fields} />}
    {!(d.circuit === "OPEN" && d.openedByHand) && (
      <Action
        viewer={viewer}
        action={destinationActionPath(d.destination, "open")}
        label="Open circuit"
        danger
        confirm={`Open the circuit of ${d.destination} by hand? Its messages wait, spending no retries, until it is closed by hand; those in flight finish.`}
        fields={fields}
      />
    )}
  </>
);

const count = (n: number) => n.toLocaleString("en-US");
