/**
 * "Why it is waiting": what holds a pending message (domain/messages/hold.ts
 * decides), in words, with links to what holds it — its queue's row, its
 * flow-control key and that key's messages, its destination's row.
 */
import type { Child, FC } from "hono/jsx";
import type { DestinationHold, Hold, KeyHold, QueuePlace } from "../../../../domain/messages/hold";
import { plural, Time } from "../../kit/components";
import { linkTo } from "../../kit/params";
import { DestinationLink } from "../../kit/destination-link";
import { KeyLink } from "../flow-control/key-link";
import { AnswerLine, StatusText } from "../../kit/answer-line";

/** The panel; nothing once the message is finished. */
export const WhyWaiting: FC<{ hold: Hold; now: number }> = ({ hold, now }) =>
  hold.kind === "finished" ? null : (
    <section class="card why" data-hold={hold.kind}>
      <h2>Why it is waiting</h2>
      <Reason hold={hold} now={now} />
    </section>
  );

const Reason = ({ hold, now }: { hold: Exclude<Hold, { kind: "finished" }>; now: number }): Child => {
  switch (hold.kind) {
    case "in-flight":
      return <p>In flight: a worker claimed it{hold.claimedAt && <> <Time at={hold.claimedAt} now={now} /></>} and is attempting it now.</p>;
    case "paused-queue":
      return (
        <p>
          Waiting in a <strong>paused</strong> queue: <QueueLink place={hold} /> is paused, and delivers nothing until it is resumed.
        </p>
      );
    case "queue-parallelism":
      return (
        <p>
          Waiting in queue <QueueLink place={hold} /> behind its parallelism: {hold.inFlight} of {hold.parallelism} in flight,{" "}
          {hold.ahead} waiting ahead of it.
        </p>
      );
    case "flow-control":
      return <KeyReason hold={hold} now={now} />;
    case "destination":
      return <DestinationReason hold={hold} now={now} />;
    case "retry-backoff":
      return (
        <>
          <p>
            In retry backoff until <Time at={hold.until} now={now} /> (attempt {hold.attempt} of {hold.attempts}).
          </p>
          {hold.last && (
            <p>
              Last answer: <StatusText status={hold.last.status} />
              <AnswerLine answer={hold.last} />
            </p>
          )}
        </>
      );
    case "delayed":
      return (
        <p>
          Delayed until <Time at={hold.until} now={now} /> (its delay or not-before time).
        </p>
      );
    case "due":
      return (
        <p>
          Due now (since <Time at={hold.since} now={now} />), waiting for a worker to take it.
        </p>
      );
    case "unscheduled":
      return <p>Pending, but neither due nor claimed by a worker: nothing will attempt it until it is released.</p>;
  }
};

/** When the next attempt comes, as far as the hold tells: a time, or what it waits for. */
export const NextAttempt: FC<{ hold: Hold; now: number }> = ({ hold, now }) => {
  switch (hold.kind) {
    case "delayed":
    case "retry-backoff":
      return <Time at={hold.until} now={now} />;
    case "due":
      return <span>now, when a worker takes it</span>;
    case "in-flight":
      return <span>under way</span>;
    case "flow-control":
      return hold.until ? <Time at={hold.until} now={now} /> : <span>when its flow-control key lets it go (see why it is waiting)</span>;
    case "paused-queue":
      return <span>when its queue is resumed</span>;
    case "queue-parallelism":
      return <span>when its queue has a free slot</span>;
    case "destination":
      return <DestinationNext hold={hold} now={now} />;
    default:
      return <span class="muted">—</span>;
  }
};

/** The queue, linked to its row on the queues page. */
const QueueLink = ({ place }: { place: QueuePlace }) => (
  <a class="mono" href={`${linkTo("/dashboard/queues", { after: place.before })}#${encodeURIComponent(place.queue)}`} data-link="queue">
    {place.queue}
  </a>
);

/** Held by a flow-control key: why, what counts against it, and links to the key and its messages. */
const KeyReason = ({ hold, now }: { hold: KeyHold; now: number }) => (
  <>
    <p>
      Held by flow-control key <KeyLink name={hold.key} /> {WHY_KEY[hold.reason](hold)}
      {hold.until && (
        <>
          {" "}
          Its rate window frees a slot for it <Time at={hold.until} now={now} />.
        </>
      )}
    </p>
    <p>
      {[
        hold.parallelism !== null && `${hold.inFlight} of ${hold.parallelism} in flight`,
        hold.rate !== null && `${hold.startedInWindow} of ${hold.rate} started in the last ${hold.periodMs / 1000} s`,
        hold.ahead === 0 ? "first of its held messages" : `${hold.ahead} of its messages held ahead of it`,
      ]
        .filter(Boolean)
        .join(" · ")}{" "}
      ·{" "}
      <a href={linkTo("/dashboard/messages", { flowControlKey: hold.key })} data-link="key-messages">
        the key's messages
      </a>
    </p>
  </>
);

const WHY_KEY: Record<KeyHold["reason"], (hold: KeyHold) => string> = {
  paused: () => "while the key is paused.",
  parallelism: (h) => `at its parallelism limit: ${h.inFlight} of ${h.parallelism} deliveries in flight.`,
  rate: (h) => `at its rate limit: ${h.startedInWindow} of ${h.rate ?? "—"} deliveries started in the last ${h.periodMs / 1000} s.`,
  releasing: () => "until now: the key has room, and lets it go.",
};

/** Waiting in its destination's line: why the line holds it (one sentence a reason), and how many wait ahead of it. */
const DestinationReason = ({ hold, now }: { hold: DestinationHold; now: number }) => (
  <p data-reason={hold.reason}>
    Waiting in the line of its destination <DestinationLink destination={hold.destination} />: <LineHold hold={hold} now={now} />;{" "}
    {hold.ahead === 0 ? "it is first in the line" : `${plural(hold.ahead, "of its messages waits", "of its messages wait")} ahead of it`}.
  </p>
);

/** Why the destination's line holds its messages, as `holdOf` read it. */
const LineHold = ({ hold, now }: { hold: DestinationHold; now: number }): Child => {
  switch (hold.reason) {
    case "open":
      if (hold.openedByHand) return <>its circuit is open until it is closed by hand (it was opened by hand)</>;
      return (
        <>
          its circuit is open {hold.until === null ? "until a probe decides" : <>until <Time at={hold.until} now={now} /></>}
          {hold.openReason && <> ({hold.openReason})</>}
        </>
      );
    case "probing":
      return <>a probe of its circuit is under way and decides whether it closes{hold.openReason && <> ({hold.openReason})</>}</>;
    case "held":
      return (
        <>
          a 429 asked for rest until <Time at={hold.until} now={now} />
        </>
      );
    case "share":
      return <>the workers hold its share of their delivery slots, and it takes the next free one</>;
  }
};

/** When a message in its destination's line is attempted next, as far as the line tells. */
const DestinationNext = ({ hold, now }: { hold: DestinationHold; now: number }) => {
  if (hold.reason === "held" && hold.until !== null) return <Time at={hold.until} now={now} />;
  if (hold.reason === "open" && !hold.openedByHand && hold.until !== null) {
    return (
      <span>
        when its destination's circuit closes (a probe <Time at={hold.until} now={now} />)
      </span>
    );
  }
  return <span>{DESTINATION_NEXT[hold.reason === "open" && hold.openedByHand ? "by-hand" : hold.reason]}</span>;
};

const DESTINATION_NEXT: Record<DestinationHold["reason"] | "by-hand", string> = {
  "by-hand": "when its destination's circuit is closed by hand",
  open: "when its destination's circuit closes",
  probing: "when its destination's probe decides",
  held: "when its destination's hold ends",
  share: "when a delivery slot for its destination is free",
};
