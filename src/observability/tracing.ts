/**
 * OpenTelemetry traces (the official SDK, exported over OTLP/HTTP as
 * config/tracing-config.ts reads the standard variables). Off by default:
 * `NO_TRACING` makes no span and costs a null check where a span would start,
 * and the SDK (otel-tracing.ts, which service.ts imports only when tracing is
 * on: about 170 ms of CPU at every start otherwise) is not even loaded.
 *
 * A message carries its trace: a publish stores the publisher's `traceparent`
 * (or, without one, its own publish span's) with the message, and every
 * attempt, however long the delay or the retries, is a child span of it and
 * sends its own `traceparent` to the receiver, whose spans then join the same
 * trace. Each service has its own provider (none is registered globally), so
 * several services in one process (the tests) keep their spans apart.
 *
 * Spans carry ids, origins, counts and states, never a body, a token, a
 * header's value or a URL's path and query (where credentials hide).
 */
import type { Attributes } from "@opentelemetry/api";

/** A span in progress. */
export interface TraceSpan {
  /** The span's context as a W3C `traceparent` value: what its children carry. */
  readonly traceparent: string;
  /** Adds attributes (ids, counts, states: never a secret). */
  set(attributes: Attributes): void;
  /** Ends the span, failed with `error` when given. */
  end(error?: string): void;
}

/** What starts spans; `start` answers null when tracing is off. */
export interface Tracing {
  /** Whether spans are made: off, callers skip building a span's attributes at all. */
  readonly enabled: boolean;
  /**
   * Starts span `name` as a child of the span `parent` names (a W3C
   * `traceparent`; null or not valid: a new trace).
   */
  start(name: string, kind: "producer" | "client", parent: string | null, attributes: Attributes): TraceSpan | null;
  /** A valid `traceparent` as written back by the propagator (null for anything else): what may be stored. */
  parse(traceparent: string | undefined): string | null;
  /** Exports the spans not yet sent (waiting `SHUTDOWN_WAIT_MS` at most: a collector that is down must not hold up a stop) and stops. */
  shutdown(): Promise<void>;
}

/** Tracing off: no spans, no stored trace context. */
export const NO_TRACING: Tracing = { enabled: false, start: () => null, parse: () => null, shutdown: async () => {} };
