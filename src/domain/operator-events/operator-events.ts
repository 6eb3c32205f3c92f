/**
 * Operator events: a JSON event Dispatch sends to `DISPATCH_OPERATOR_EVENTS_URL`
 * when a destination's circuit opens, probes, closes or gives up, and when
 * the DLQ grows past its threshold. Each is an ordinary message (origin
 * `operator_event`), stored in the transaction that made the transition, so
 * it is sent once per transition, signed like every delivery, retried, and
 * delivered through the same fair slots and breakers as the rest: a receiver
 * of operator events that hangs holds its share of slots, nothing more.
 */
import type { Tx } from "../../db/client";
import type { CircuitChange } from "../../db/queries/destination-health";
import { destinationOf } from "../../db/destination";
import { DEFAULT_PROJECT } from "../../db/vocabulary";
import { insertMessages } from "../publish/insert";
import { type MessageSettings, parsePublishOptions } from "../publish/options";
import { buildMessage } from "../publish/prepare";

/** What an operator event says. */
export type OperatorEvent =
  | {
      type: "circuit.opened" | "circuit.probing" | "circuit.closed" | "circuit.gave_up";
      destination: string;
      from: string;
      to: string;
      /** Why it opened (the failures), or what happened. */
      reason: string | null;
      /** When an OPEN circuit's next probe may start. */
      probeAt: string | null;
    }
  | { type: "dlq.threshold"; size: number; threshold: number };

/** Where operator events go, and how their messages are stored. */
export interface OperatorEventSettings {
  url: string | null;
  messages: MessageSettings;
}

const EVENT_TYPE = { OPEN: "circuit.opened", PROBING: "circuit.probing", CLOSED: "circuit.closed", GAVE_UP: "circuit.gave_up" } as const;

/** The event a circuit's change makes. */
export function circuitEvent(change: CircuitChange): OperatorEvent {
  return {
    type: EVENT_TYPE[change.to],
    destination: change.destination,
    from: change.from,
    to: change.to,
    reason: change.reason,
    probeAt: change.probeAt?.toISOString() ?? null,
  };
}

/**
 * Stores `events` for delivery to the operator URL in the caller's
 * transaction (nothing when none is set). Events about the operator URL's own
 * destination are left out: they would feed themselves.
 */
export async function publishOperatorEvents(tx: Tx, settings: OperatorEventSettings, events: OperatorEvent[]): Promise<void> {
  const { url } = settings;
  if (url === null) return;
  const own = destinationOf(url);
  const sent = events.filter((event) => !("destination" in event) || event.destination !== own);
  if (sent.length === 0) return;
  const options = parsePublishOptions({ "content-type": "application/json" }, "svc", settings.messages.limits);
  const at = new Date().toISOString();
  const messages = sent.map((event) =>
    buildMessage(options, { url }, Buffer.from(JSON.stringify({ ...event, at })), {
      // The operator's: events about the whole service (destinations, the DLQ) belong to no team.
      project: DEFAULT_PROJECT,
      origin: "operator_event",
      sourceMessageId: null,
      callerIp: null,
    }),
  );
  await insertMessages(tx, messages, settings.messages);
}
