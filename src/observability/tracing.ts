/**
 * OpenTelemetry traces (the official SDK, exported over OTLP/HTTP as
 * config/tracing-config.ts reads the standard variables). Off by default:
 * `NO_TRACING` makes no span and costs a null check where a span would start.
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
import { type Attributes, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "./tracing-settings";

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

/** How long a stop waits for the last spans to be exported. */
const SHUTDOWN_WAIT_MS = 2000;
const KINDS = { producer: SpanKind.PRODUCER, client: SpanKind.CLIENT } as const;
const propagator = new W3CTraceContextPropagator();

/** Tracing as `config` sets it up, or `NO_TRACING` when it is null. */
export function createTracing(config: TracingConfig | null): Tracing {
  if (config === null) return NO_TRACING;
  const exporter = config.protocol === "http/json"
    ? new JsonExporter({ url: config.endpoint, headers: config.headers })
    : new ProtobufExporter({ url: config.endpoint, headers: config.headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(config.resource),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.exportDelayMs })],
  });
  const tracer = provider.getTracer("dispatch");
  const contextOf = (traceparent: string | null) =>
    traceparent === null ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  return {
    enabled: true,
    start(name, kind, parent, attributes) {
      const span = tracer.startSpan(name, { kind: KINDS[kind], attributes }, contextOf(parent));
      return {
        traceparent: traceparentOf(trace.setSpan(ROOT_CONTEXT, span))!,
        set: (more) => span.setAttributes(more),
        end(error) {
          if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
          span.end();
        },
      };
    },
    parse: (traceparent) => (traceparent === undefined ? null : traceparentOf(contextOf(traceparent))),
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
      await Promise.race([provider.shutdown(), waited]).finally(() => clearTimeout(timer));
    },
  };
}

/** The `traceparent` of the span in `context`, or null when it holds none. */
function traceparentOf(context: ReturnType<typeof trace.setSpan>): string | null {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, defaultTextMapSetter);
  return carrier.traceparent ?? null;
}

/** The standard's samplers by name; the parent-based ones follow a sampled (or unsampled) parent. */
function samplerOf({ sampler, ratio }: TracingConfig): Sampler {
  const root = {
    always_on: new AlwaysOnSampler(),
    always_off: new AlwaysOffSampler(),
    traceidratio: new TraceIdRatioBasedSampler(ratio),
  };
  switch (sampler) {
    case "always_on":
    case "always_off":
    case "traceidratio":
      return root[sampler];
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: root.always_on });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: root.always_off });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: root.traceidratio });
  }
}
