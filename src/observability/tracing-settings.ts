/**
 * What tracing is set up with (observability/tracing.ts): read from the
 * standard OTEL_* variables by config/tracing-config.ts.
 */

/** How spans are sampled: the standard's sampler names. */
export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** The OTLP encodings Dispatch exports with. */
export const PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** Where and how spans go, when tracing is on. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  endpoint: string;
  protocol: Protocol;
  /** Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`), such as a collector's API key. */
  headers: Record<string, string>;
  /** `service.name` and the other resource attributes. */
  resource: Record<string, string>;
  sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  ratio: number;
  /** How long finished spans wait to be exported together (`OTEL_BSP_SCHEDULE_DELAY`, ms). */
  exportDelayMs: number;
}
