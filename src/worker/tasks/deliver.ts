/**
 * The `deliver` task: one attempt of one message. It re-reads the message
 * before sending (a cancelled or finished message is not sent) and records the
 * outcome in one transaction (`recordOutcome` re-checks it under a row lock).
 */
import type { Task } from "graphile-worker";
import type { Sql } from "../../db/client";
import type { HttpClient } from "../../delivery/http-client";
import { attemptDelivery, decide } from "../../domain/delivery";
import { type OutcomeSettings, recordOutcome } from "../../domain/delivery-outcome";
import { findMessage } from "../../domain/messages";
import { yieldSlotIfPaused } from "../../domain/queues";
import type { SigningKeys } from "../../domain/signing";

/** What the task needs. */
export interface DeliverDeps {
  sql: Sql;
  http: HttpClient;
  signingKeys: () => Promise<SigningKeys>;
  defaultTimeoutMs: number;
  retryDelayScale: number;
  outcome: OutcomeSettings;
  /** Key sent as a bearer token to `api/llm` unless the publisher forwarded an Authorization. */
  llmApiKey: string | null;
}

/** Thrown when shutdown interrupts an attempt: graphile-worker re-runs the job later. */
class ShutdownInterruptedError extends Error {}

/** Builds the task over its dependencies. */
export function deliverTask(deps: DeliverDeps): Task {
  return async (payload, helpers) => {
    const { id } = payload as { id: string };
    const message = await findMessage(deps.sql, id);
    if (!message || (message.state !== "CREATED" && message.state !== "RETRY")) return;
    const { queueName } = message;
    if (queueName !== null && (await deps.sql.begin((tx) => yieldSlotIfPaused(tx, id, queueName)))) return;
    const keys = await deps.signingKeys();
    const timeoutMs = message.timeoutMs ?? deps.defaultTimeoutMs;
    const credentials: Record<string, string> =
      message.api === "llm" && deps.llmApiKey ? { Authorization: `Bearer ${deps.llmApiKey}` } : {};
    const attempt = await attemptDelivery(deps.http, message, keys, timeoutMs, helpers.abortSignal, credentials);
    if (attempt.kind === "error" && helpers.abortSignal?.aborted) {
      // Not the destination's fault: release the job instead of spending a retry.
      throw new ShutdownInterruptedError(`delivery of ${id} interrupted by shutdown`);
    }
    const outcome = decide(message, attempt, deps.retryDelayScale);
    await deps.sql.begin((tx) => recordOutcome(tx, message, attempt, outcome, deps.outcome));
  };
}
