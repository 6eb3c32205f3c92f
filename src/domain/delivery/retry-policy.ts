/**
 * How long to wait before the next retry of a failed attempt.
 *
 * Order of precedence: what the destination asked for (Retry-After and the
 * rate-limit reset headers, docs/hosted-api.md §3.2), then the message's
 * Retry-Delay expression, then the dialect's default backoff.
 */
import type { Dialect } from "../../db/vocabulary";
import { compileRetryDelay } from "../retry-delay-expression";
import { retryAfterFromHeaders } from "./retry-after";

const DAY_SECONDS = 86_400;

/**
 * The default backoff before retry n (n = earlier retries). Native dialect:
 * `min(86400, e^(2n))` s (docs/interface.md "POST /v2/publish"). Compat dialect: `min(86400,
 * e^(2.5k))` s with k = n + 1, the hosted service's table (12 s, 2 m 28 s, …).
 */
export function defaultBackoffMs(dialect: Dialect, retried: number): number {
  const seconds = dialect === "svc" ? Math.exp(2 * retried) : Math.exp(2.5 * (retried + 1));
  return Math.min(DAY_SECONDS, seconds) * 1000;
}

/** What the retry delay depends on. */
export interface RetryContext {
  dialect: Dialect;
  retried: number;
  retryDelayExpression: string | null;
  responseHeaders: Record<string, string[]> | null;
  /** Multiplies the result; tests use a small scale instead of sleeping. */
  scale: number;
  now: Date;
}

/** Milliseconds to wait before the next attempt. */
export function retryDelayMs(context: RetryContext): number {
  const requested = context.responseHeaders ? retryAfterFromHeaders(context.responseHeaders, context.now) : null;
  const delay =
    requested ??
    (context.retryDelayExpression !== null
      ? compileRetryDelay(context.retryDelayExpression).evaluate(context.retried)
      : defaultBackoffMs(context.dialect, context.retried));
  return Math.round(delay * context.scale);
}
