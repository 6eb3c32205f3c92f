/**
 * Tracing by the OpenTelemetry SDK: a provider of its own per service, a
 * batch processor and an OTLP exporter (JSON or protobuf over HTTP), the
 * sampler the standard variables name. service.ts imports it only when
 * tracing is on (tracing.ts holds the interfaces and `NO_TRACING`).
 */
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
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
import type { Tracing } from "./tracing";

/** How long a stop waits for the last spans to be exported. */
const SHUTDOWN_WAIT_MS = 2000;
const KINDS = { producer: SpanKind.PRODUCER, client: SpanKind.CLIENT } as const;
const propagator = new W3CTraceContextPropagator();

/** Tracing by the SDK, as `config` sets it up. */
export function sdkTracing(config: TracingConfig): Tracing {
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
