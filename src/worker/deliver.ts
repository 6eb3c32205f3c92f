/**
 * One attempt of one claimed message: the request as the destination gets it
 * (workflow envelope, signature, API credentials), what came back, and the
 * decision it leads to. Recording is the caller's job.
 */
import type { Sql } from "../db/client";
import { type Attempt, attemptDelivery, decide, type Outcome } from "../domain/delivery/attempt";
import { failureKind } from "../domain/destinations/failure";
import type { AttemptRecord } from "../domain/delivery/outcome";
import type { SigningKeys } from "../domain/delivery/signing";
import type { ClaimedMessage } from "../db/queries/claim-messages";
import { detectNonWorkflowDestination, prepareDelivery } from "../domain/workflows/wire";
import type { Tracing } from "../observability/tracing";
import type { HttpClient } from "../outbound/http-client";
import { endAttemptSpan, startAttemptSpan } from "./attempt-span";

/** What an attempt needs. */
export interface DeliverDeps {
  sql: Sql;
  http: HttpClient;
  /** The keys a project's deliveries are signed with. */
  signingKeys: (project: string) => Promise<SigningKeys>;
  /** Waits out a database outage around a read. */
  retrying: <T>(operation: () => Promise<T>) => Promise<T>;
  defaultTimeoutMs: number;
  retryDelayScale: number;
  /** Key sent as a bearer token to `api/llm` unless the publisher forwarded an Authorization. */
  llmApiKey: string | null;
  /**
   * Aborted when the worker's stop grace runs out, just before the attempts
   * in flight are ended (`HttpClient.abortInFlight`): an attempt cut short by
   * it is handed back, not recorded.
   */
  shutdown: AbortSignal;
  /**
   * Why a message is not sent when its destination's circuit gave up (the words
   * its attempt and, once its retries run out, its DLQ entry carry), or null to
   * send it: any other circuit, or the circuit's one real attempt per cool-down.
   */
  unreachable: (destination: string | null) => Promise<string | null>;
  /** Each attempt's span, a child of its message's trace (off: `NO_TRACING`). */
  tracing: Tracing;
}

/** How an attempt of a claimed message went. */
export type Delivery =
  /** Made: its record is to be written. */
  | { kind: "attempted"; record: AttemptRecord }
  /** Not sent: it could not start by its flow-control admission's deadline. */
  | { kind: "late" }
  /** Cut short by the worker's shutdown: not the destination's fault, to be handed back. */
  | { kind: "interrupted" };

/**
 * Attempts `message` once, if it can start by `startBy` (epoch ms). As the
 * `probe` of its destination's open circuit, a failure that counts against
 * the destination holds the message (back to its line, no retry spent). A
 * message whose destination's circuit gave up is not sent: its attempt fails
 * at once saying why, and spends a retry as any failed attempt does.
 */
export async function deliverClaimed(
  deps: DeliverDeps,
  message: ClaimedMessage,
  { startBy, probe = false }: { startBy?: number; probe?: boolean },
): Promise<Delivery> {
  const delivery = await deps.retrying(() => prepareDelivery(deps.sql, message));
  const keys = await deps.retrying(() => deps.signingKeys(message.project));
  if (startBy !== undefined && Date.now() > startBy) return { kind: "late" };
  const sent = delivery.message;
  const unreachable = probe ? null : await deps.unreachable(sent.destination);
  const span = startAttemptSpan(deps.tracing, sent);
  const attempt = unreachable === null ? await send(deps, sent, keys, span?.traceparent) : notSent(unreachable);
  if (attempt.kind === "error" && deps.shutdown.aborted) {
    endAttemptSpan(span, attempt, "interrupted");
    return { kind: "interrupted" };
  }
  const outcome: Outcome =
    probe && failureKind(attempt) !== null
      ? { kind: "held", error: attempt.kind === "error" ? attempt.error : `destination responded with status ${attempt.status}` }
      : detectNonWorkflowDestination(delivery, attempt, decide(sent, attempt, deps.retryDelayScale));
  endAttemptSpan(span, attempt, outcome);
  return { kind: "attempted", record: { message: sent, attempt, outcome, probe } };
}

/** Sends the message, with the configured key of an `api/llm` destination and the attempt's `traceparent` when traced. */
function send(deps: DeliverDeps, message: ClaimedMessage, keys: SigningKeys, traceparent: string | undefined): Promise<Attempt> {
  const timeoutMs = message.timeoutMs ?? deps.defaultTimeoutMs;
  const credentials: Record<string, string> =
    message.api === "llm" && deps.llmApiKey ? { Authorization: `Bearer ${deps.llmApiKey}` } : {};
  if (traceparent !== undefined) credentials.traceparent = traceparent;
  return attemptDelivery(deps.http, message, keys, timeoutMs, credentials);
}

/** An attempt that was not made: `why`, in the attempt log and, once its retries run out, the DLQ. */
function notSent(why: string): Attempt {
  return { kind: "error", error: `not sent: ${why}`, code: null, notSent: true, startedAt: new Date(), durationMs: 0 };
}
