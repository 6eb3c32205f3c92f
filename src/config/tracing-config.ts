/**
 * Tracing's configuration, from the OpenTelemetry SDK's standard variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
 * off unless `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 * or `OTEL_TRACES_EXPORTER=otlp` turns it on, and off whatever else is set
 * when `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Spans are
 * exported with OTLP over HTTP, as protobuf (the standard's default) or JSON
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`). Read here, with the rest of the
 * configuration, so that a bad value stops the start with a clear message.
 */
import { PROTOCOLS, type Protocol, SAMPLERS, type SamplerName, type TracingConfig } from "../observability/tracing-settings";

export type { TracingConfig };

const DEFAULT_ENDPOINT = "http://localhost:4318";

/** Tracing's configuration from `env`, or null when tracing is off; `problems` collects bad values. */
export function parseTracingConfig(env: NodeJS.ProcessEnv, problems: string[]): TracingConfig | null {
  const read = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? null : value;
  };
  if (read("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  const exporters = (read("OTEL_TRACES_EXPORTER") ?? "").toLowerCase().split(",").map((name) => name.trim()).filter(Boolean);
  if (exporters.includes("none")) return null;
  const unknown = exporters.filter((name) => name !== "otlp");
  if (unknown.length > 0) problems.push(`OTEL_TRACES_EXPORTER must be otlp or none: Dispatch exports no ${unknown.join(", ")} spans`);
  const tracesEndpoint = read("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpoint = read("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (tracesEndpoint === null && endpoint === null && !exporters.includes("otlp")) return null;
  const url = tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, "")}/v1/traces`;
  if (!/^https?:\/\/[^/]/.test(url)) problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got ${JSON.stringify(url)})`);
  return {
    endpoint: url,
    protocol: protocolOf(read("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? read("OTEL_EXPORTER_OTLP_PROTOCOL"), problems),
    headers: keyValues(read("OTEL_EXPORTER_OTLP_TRACES_HEADERS") ?? read("OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS", problems),
    resource: resourceOf(read, problems),
    sampler: samplerOf(read("OTEL_TRACES_SAMPLER"), problems),
    ratio: ratioOf(read("OTEL_TRACES_SAMPLER_ARG"), problems),
    exportDelayMs: delayOf(read("OTEL_BSP_SCHEDULE_DELAY"), problems),
  };
}

function protocolOf(value: string | null, problems: string[]): Protocol {
  if (value === null) return "http/protobuf";
  if ((PROTOCOLS as readonly string[]).includes(value)) return value as Protocol;
  problems.push(`OTEL_EXPORTER_OTLP_PROTOCOL must be ${PROTOCOLS.join(" or ")} (Dispatch exports over HTTP; got ${JSON.stringify(value)})`);
  return "http/protobuf";
}

function samplerOf(value: string | null, problems: string[]): SamplerName {
  if (value === null) return "parentbased_always_on";
  if ((SAMPLERS as readonly string[]).includes(value)) return value as SamplerName;
  problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")} (got ${JSON.stringify(value)})`);
  return "parentbased_always_on";
}

function ratioOf(value: string | null, problems: string[]): number {
  if (value === null) return 1;
  const ratio = Number(value);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got ${JSON.stringify(value)})`);
  return 1;
}

function delayOf(value: string | null, problems: string[]): number {
  if (value === null) return 5000;
  const ms = Number(value);
  if (Number.isInteger(ms) && ms >= 0) return ms;
  problems.push(`OTEL_BSP_SCHEDULE_DELAY must be a whole number of milliseconds (got ${JSON.stringify(value)})`);
  return 5000;
}

/** `OTEL_RESOURCE_ATTRIBUTES`, with `service.name` from `OTEL_SERVICE_NAME` (else `dispatch`). */
function resourceOf(read: (name: string) => string | null, problems: string[]): Record<string, string> {
  const attributes = keyValues(read("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES", problems);
  return { ...attributes, "service.name": read("OTEL_SERVICE_NAME") ?? attributes["service.name"] ?? "dispatch" };
}

/** A `key=value,key=value` list, percent-decoded, as the standard writes headers and resource attributes. */
function keyValues(text: string | null, name: string, problems: string[]): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const item of (text ?? "").split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    try {
      if (at <= 0) throw new Error("no =");
      pairs[decodeURIComponent(item.slice(0, at).trim())] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      problems.push(`${name} must be a list of key=value pairs separated by commas`);
      return {};
    }
  }
  return pairs;
}
