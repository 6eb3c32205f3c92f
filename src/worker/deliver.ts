/**
 * One attempt of one claimed message: the request as the destination gets it
 * (workflow envelope, signature, API credentials), what came back, and the
 * decision it leads to. Recording is the caller's job.
 */
import type { Sql } from "../db/client";
import { attemptDelivery, decide } from "../domain/delivery/attempt";
import type { AttemptRecord } from "../domain/delivery/outcome";
import type { SigningKeys } from "../domain/delivery/signing";
import type { ClaimedMessage } from "../db/queries/claim-messages";
import { detectNonWorkflowDestination, prepareDelivery } from "../domain/workflows/wire";
import type { HttpClient } from "../outbound/http-client";

/** What an attempt needs. */
export interface DeliverDeps {
  sql: Sql;
  http: HttpClient;
  signingKeys: () => Promise<SigningKeys>;
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
}

/** How an attempt of a claimed message went. */
export type Delivery =
  /** Made: its record is to be written. */
  | { kind: "attempted"; record: AttemptRecord }
  /** Not sent: it could not start by its flow-control admission's deadline. */
  | { kind: "late" }
  /** Cut short by the worker's shutdown: not the destination's fault, to be handed back. */
  | { kind: "interrupted" };

/** Attempts `message` once, if it can start by `startBy` (epoch ms). */
export async function deliverClaimed(deps: DeliverDeps, message: ClaimedMessage, startBy?: number): Promise<Delivery> {
  const delivery = await deps.retrying(() => prepareDelivery(deps.sql, message));
  const keys = await deps.retrying(() => deps.signingKeys());
  if (startBy !== undefined && Date.now() > startBy) return { kind: "late" };
  const timeoutMs = message.timeoutMs ?? deps.defaultTimeoutMs;
  const credentials: Record<string, string> =
    message.api === "llm" && deps.llmApiKey ? { Authorization: `Bearer ${deps.llmApiKey}` } : {};
  const sent = delivery.message;
  const attempt = await attemptDelivery(deps.http, sent, keys, timeoutMs, credentials);
  if (attempt.kind === "error" && deps.shutdown.aborted) return { kind: "interrupted" };
  const outcome = detectNonWorkflowDestination(delivery, attempt, decide(sent, attempt, deps.retryDelayScale));
  return { kind: "attempted", record: { message: sent, attempt, outcome } };
}
