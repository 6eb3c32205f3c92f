/**
 * An attempt's span (observability/tracing.ts): a child of the trace its
 * message carries, named for what the attempt is (a delivery, a callback, a
 * workflow step), with why the message waited and what came of it. Only
 * ids, the destination's origin, counts and states go into it.
 */
import type { Attributes } from "@opentelemetry/api";
import type { ClaimedMessage } from "../db/queries/claim-messages";
import type { Attempt, Outcome } from "../domain/delivery/attempt";
import type { Tracing, TraceSpan } from "../observability/tracing";

/** What the span is named for the attempt of `message`. */
function spanName(message: ClaimedMessage): string {
  if (message.origin === "callback") return "callback";
  if (message.origin === "failure_callback") return "failure callback";
  if (message.workflowRunPk !== null) return "workflow step";
  if (message.origin === "operator_event") return "operator event";
  return "deliver";
}

/** Why the message waited before this attempt: its retry's backoff, its queue, its flow-control key, a delay, or nothing. */
function waitReason(message: ClaimedMessage): string {
  if (message.retried > 0) return "retry";
  if (message.queueName !== null) return "queue";
  if (message.flowControlKey !== null) return "flow_control";
  if (message.notBefore.getTime() > message.createdAt.getTime()) return "delay";
  return "none";
}

/** Starts the span of an attempt of `message` about to be sent (null when tracing is off). */
export function startAttemptSpan(tracing: Tracing, message: ClaimedMessage): TraceSpan | null {
  if (!tracing.enabled) return null;
  const url = new URL(message.url);
  return tracing.start(spanName(message), "client", message.traceparent, {
    "messaging.system": "dispatch",
    "messaging.message.id": message.id,
    "dispatch.project": message.project,
    "dispatch.attempt": message.retried + 1,
    "dispatch.max_attempts": message.maxRetries + 1,
    "dispatch.wait.reason": waitReason(message),
    "dispatch.wait.late_ms": Math.max(0, Date.now() - message.nextDeliveryAt.getTime()),
    "http.request.method": message.method,
    "url.scheme": url.protocol.replace(":", ""),
    "server.address": url.hostname,
    "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
  });
}

/** Ends the attempt's span with its answer and what Dispatch decided; failed unless delivered. */
export function endAttemptSpan(span: TraceSpan | null, attempt: Attempt, outcome: Outcome | "interrupted"): void {
  if (span === null) return;
  const attributes: Attributes = { "dispatch.outcome": outcome === "interrupted" ? "interrupted" : outcome.kind };
  if (attempt.kind === "response") attributes["http.response.status_code"] = attempt.status;
  else attributes["error.type"] = attempt.code ?? (attempt.notSent ? "not_sent" : "error");
  if (outcome !== "interrupted" && outcome.kind === "retry") attributes["dispatch.retry.delay_ms"] = outcome.delayMs;
  span.set(attributes);
  const delivered = outcome !== "interrupted" && outcome.kind === "delivered";
  span.end(delivered ? undefined : attempt.kind === "response" ? `status ${attempt.status}` : (attempt.code ?? "request failed"));
}
