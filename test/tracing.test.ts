/**
 * OpenTelemetry traces, exported over OTLP/HTTP to a collector on 127.0.0.1
 * (a receiver that keeps what it is sent): a message published with a
 * `traceparent`, delayed and retried twice, yields the publish span and three
 * attempt spans under the publisher's span, in the publisher's trace; the
 * receiver gets a `traceparent` of that trace on every attempt, naming the
 * attempt's span; a callback's attempt joins its source's trace; nothing
 * secret is in any span. The standard variables turn tracing on and off.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config";
import { poll } from "./support/poll";
import { type Received, useReceiver } from "./support/receiver";
import { startTestService, TEST_TOKEN, useDispatch } from "./support/service";

/** The collector: OTLP/HTTP JSON exports, as POSTs to /v1/traces. */
const collector = useReceiver();
/** Fails each path's first two attempts, then answers 200. */
const tries = new Map<string, number>();
const receiver = useReceiver((request) => {
  const n = (tries.get(request.path) ?? 0) + 1;
  tries.set(request.path, n);
  return request.path.startsWith("/flaky") && n <= 2 ? { status: 500, body: "not yet" } : { status: 200, body: "ok" };
});
const dispatch = useDispatch(() => ({
  delayScale: 0.05,
  tracing: {
    endpoint: `${collector.url}/v1/traces`,
    protocol: "http/json",
    headers: { "x-collector-key": "collector-secret-0123456789" },
    resource: { "service.name": "dispatch-under-test" },
    sampler: "parentbased_always_on",
    ratio: 1,
    exportDelayMs: 50,
  },
}));

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** Every span the collector was sent so far. */
function spans(): Span[] {
  return collector.requests.flatMap((request) => {
    const document = JSON.parse(request.body.toString()) as {
      resourceSpans: { scopeSpans: { spans: (Omit<Span, "attributes"> & { attributes?: { key: string; value: Record<string, unknown> }[] })[] }[] }[];
    };
    return document.resourceSpans.flatMap((resource) =>
      resource.scopeSpans.flatMap((scope) =>
        scope.spans.map((span) => ({
          ...span,
          attributes: Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]])),
        })),
      ),
    );
  });
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PUBLISHER_SPAN = "00f067aa0ba902b7";
/** The secrets no span may hold. */
const SECRETS = ["hunter2", "forwarded-secret", "secret-body", "collector-secret"];

describe("tracing", () => {
  it("puts the publish and every attempt of a delayed, twice retried message in the publisher's trace, and tells the receiver", async () => {
    const published = await dispatch.api(`/v2/publish/${receiver.url}/flaky?key=hunter2`, {
      method: "POST",
      headers: {
        traceparent: `00-${TRACE}-${PUBLISHER_SPAN}-01`,
        "Svc-Delay": "2s",
        "Svc-Retries": "2",
        "Svc-Forward-Authorization": "Bearer forwarded-secret",
      },
      body: "secret-body",
    });
    expect(published.status).toBe(200);
    const { messageId } = await published.json();
    await poll(async () => (await (await dispatch.api(`/v2/messages/${messageId}`)).json()).state === "DELIVERED", "the third attempt delivered");
    const inTrace = () => spans().filter((span) => span.traceId === TRACE);
    await poll(() => inTrace().length === 4, () => `four spans in the trace (${inTrace().map((s) => s.name).join(", ")})`);

    const [publish] = inTrace().filter((span) => span.name === "publish");
    expect(publish).toMatchObject({
      parentSpanId: PUBLISHER_SPAN,
      attributes: { "messaging.message.id": messageId, "server.address": "127.0.0.1", "dispatch.destination": receiver.url, "dispatch.dialect": "svc" },
    });
    const attempts = inTrace().filter((span) => span.name === "deliver").sort((a, b) => Number(a.attributes["dispatch.attempt"]) - Number(b.attributes["dispatch.attempt"]));
    expect(attempts.map((span) => [span.parentSpanId, span.attributes["dispatch.attempt"], span.attributes["http.response.status_code"], span.attributes["dispatch.outcome"]])).toEqual([
      [PUBLISHER_SPAN, 1, 500, "retry"],
      [PUBLISHER_SPAN, 2, 500, "retry"],
      [PUBLISHER_SPAN, 3, 200, "delivered"],
    ]);
    expect(attempts.map((span) => span.attributes["dispatch.wait.reason"])).toEqual(["delay", "retry", "retry"]);

    // The receiver saw each attempt's own span as its parent, in the same trace.
    const sent = receiver.requests.filter((request) => request.path.startsWith("/flaky")).map((request) => request.headers.traceparent);
    expect(sent).toEqual(attempts.map((span) => `00-${TRACE}-${span.spanId}-01`));

    const exported = collector.requests.map((request: Received) => request.body.toString()).join("\n");
    for (const secret of [...SECRETS, TEST_TOKEN]) expect(exported).not.toContain(secret);
    expect(collector.requests.every((request) => request.headers["x-collector-key"] === "collector-secret-0123456789")).toBe(true);
  });

  it("starts a trace at the publish when the publisher sent none, and a callback's attempt joins it", async () => {
    const published = await dispatch.api(`/v2/publish/${receiver.url}/plain`, {
      method: "POST",
      headers: { "Svc-Callback": `${receiver.url}/callback` },
      body: "x",
    });
    const { messageId } = await published.json();
    const publishSpan = () => spans().find((span) => span.name === "publish" && span.attributes["messaging.message.id"] === messageId);
    await poll(() => publishSpan() !== undefined, "the publish span");
    const { traceId, spanId } = publishSpan()!;
    const children = () => spans().filter((span) => span.traceId === traceId && span.parentSpanId === spanId).map((span) => span.name).sort();
    await poll(() => children().length === 2, () => `the attempt and the callback's attempt (${children().join(", ")})`);
    expect(children()).toEqual(["callback", "deliver"]);
  });

  it("puts a workflow trigger and its first step's attempt in the caller's trace", async () => {
    const trace = "0af7651916cd43dd8448eb211c80319c";
    const triggered = await dispatch.api(`/v2/trigger/${receiver.url}/workflow`, {
      method: "POST",
      headers: { traceparent: `00-${trace}-b7ad6b7169203331-01` },
      body: "{}",
    });
    expect(triggered.status).toBe(200);
    const inTrace = () => spans().filter((span) => span.traceId === trace);
    const names = () => inTrace().map((span) => span.name);
    await poll(() => names().includes("trigger") && names().includes("workflow step"), () => `the trigger and the step's attempt (${names().join(", ")})`);
    // The receiver is no workflow SDK, so the run fails and its failure callback follows: in the same trace too.
    expect(inTrace().every((span) => span.parentSpanId === "b7ad6b7169203331")).toBe(true);
  });
});

it("exports as protobuf, the standard's default protocol", async () => {
  const traced = await startTestService({ tracing: { ...dispatch.config.tracing!, endpoint: `${collector.url}/proto/v1/traces`, protocol: "http/protobuf" } });
  try {
    const published = await traced.api(`/v2/publish/${receiver.url}/proto`, { method: "POST", body: "x" });
    expect(published.status).toBe(200);
    const exports = () => collector.requests.filter((request) => request.path === "/proto/v1/traces");
    await poll(() => exports().length > 0, "a protobuf export");
    expect(exports()[0]!.headers["content-type"]).toBe("application/x-protobuf");
    expect(exports()[0]!.body.includes(Buffer.from("dispatch-under-test"))).toBe(true);
  } finally {
    await traced.stop();
  }
});

it("exports the spans still waiting when the service stops", async () => {
  const traced = await startTestService({ tracing: { ...dispatch.config.tracing!, endpoint: `${collector.url}/at-stop/v1/traces`, exportDelayMs: 600_000 } });
  const published = await traced.api(`/v2/publish/${receiver.url}/at-stop`, { method: "POST", body: "x" });
  const { messageId } = await published.json();
  await traced.stop();
  const exported = collector.requests.filter((request) => request.path === "/at-stop/v1/traces").map((request) => request.body.toString()).join("\n");
  expect(exported).toContain(messageId);
});

describe("tracing's configuration", () => {
  const tracingOf = (env: Record<string, string>) => loadConfig(env).tracing;

  it("is off unless the standard variables turn it on, and off again when they say so", () => {
    expect(tracingOf({})).toBeNull();
    expect(tracingOf({ OTEL_SERVICE_NAME: "x" })).toBeNull();
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" })).toBeNull();
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" })).toBeNull();
    expect(tracingOf({ OTEL_TRACES_EXPORTER: "otlp" })).toMatchObject({ endpoint: "http://localhost:4318/v1/traces" });
  });

  it("reads the endpoint, protocol, headers, resource and sampler the standard way", () => {
    expect(
      tracingOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%3Db,x=1",
        OTEL_SERVICE_NAME: "dispatch-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }),
    ).toEqual({
      endpoint: "http://127.0.0.1:4318/v1/traces",
      protocol: "http/protobuf",
      headers: { "api-key": "a=b", x: "1" },
      resource: { "deployment.environment": "prod", "service.name": "dispatch-eu" },
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
      exportDelayMs: 5000,
    });
    expect(tracingOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:9/traces", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toMatchObject({
      endpoint: "http://127.0.0.1:9/traces",
      protocol: "http/json",
      resource: { "service.name": "dispatch" },
    });
  });

  it("stops the start with a clear message for a value it cannot use, quoting no header value", () => {
    const bad = (env: Record<string, string>) => () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", ...env });
    expect(bad({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
    expect(bad({ OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(/OTEL_TRACES_SAMPLER must be one of/);
    expect(bad({ OTEL_TRACES_SAMPLER_ARG: "2" })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(bad({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(bad({ OTEL_EXPORTER_OTLP_HEADERS: "secret-key-without-value" })).toThrow(ConfigError);
    expect(bad({ OTEL_EXPORTER_OTLP_HEADERS: "secret-key-without-value" })).not.toThrow(/secret-key/);
  });
});
