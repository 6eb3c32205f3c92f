/**
 * The `deliver` task: one attempt of one message. It re-reads the message
 * before sending (a cancelled or finished message is not sent) and hands the
 * outcome to `recordOutcome`, which re-checks it under a row lock. Reads and
 * outcome writes of concurrent deliveries are batched by the runner.
 */
import type { Task } from "graphile-worker";
import type { Sql } from "../../db/client";
import type { HttpClient } from "../../delivery/http-client";
import { attemptDelivery, decide, type StoredMessage } from "../../domain/delivery/attempt";
import type { AttemptRecord } from "../../domain/delivery/outcome";
import { yieldSlotIfPaused } from "../../domain/queues";
import { detectNonWorkflowDestination, prepareDelivery } from "../../domain/workflows/delivery";
import type { SigningKeys } from "../../domain/signing";

/** What the task needs. */
export interface DeliverDeps {
  sql: Sql;
  http: HttpClient;
  loadMessage: (id: string) => Promise<StoredMessage | undefined>;
  recordOutcome: (record: AttemptRecord) => Promise<void>;
  signingKeys: () => Promise<SigningKeys>;
  defaultTimeoutMs: number;
  retryDelayScale: number;
  /** Key sent as a bearer token to `api/llm` unless the publisher forwarded an Authorization. */
  llmApiKey: string | null;
}

/** Thrown when shutdown interrupts an attempt: graphile-worker re-runs the job later. */
class ShutdownInterruptedError extends Error {}

/** Builds the task over its dependencies. */
export function deliverTask(deps: DeliverDeps): Task {
  return async (payload, helpers) => {
    const { id } = payload as { id: string };
    const message = await deps.loadMessage(id);
    if (!message || (message.state !== "CREATED" && message.state !== "RETRY")) return;
    const { queueName } = message;
    if (queueName !== null && (await deps.sql.begin((tx) => yieldSlotIfPaused(tx, id, queueName)))) return;
    const delivery = await prepareDelivery(deps.sql, message);
    const keys = await deps.signingKeys();
    const timeoutMs = message.timeoutMs ?? deps.defaultTimeoutMs;
    const credentials: Record<string, string> =
      message.api === "llm" && deps.llmApiKey ? { Authorization: `Bearer ${deps.llmApiKey}` } : {};
    const sent = delivery.message;
    const attempt = await attemptDelivery(deps.http, sent, keys, timeoutMs, helpers.abortSignal, credentials);
    if (attempt.kind === "error" && helpers.abortSignal?.aborted) {
      // Not the destination's fault: release the job instead of spending a retry.
      throw new ShutdownInterruptedError(`delivery of ${id} interrupted by shutdown`);
    }
    const outcome = detectNonWorkflowDestination(delivery, attempt, decide(sent, attempt, deps.retryDelayScale));
    await deps.recordOutcome({ message: sent, attempt, outcome });
  };
}
