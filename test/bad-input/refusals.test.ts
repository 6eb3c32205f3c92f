/**
 * Bad input answers a 4xx `{"error": "..."}` and changes nothing: a NUL, a
 * percent-escape that is not UTF-8 or an oversize value in any path
 * parameter or query parameter, and a NUL, unpaired surrogate or non-UTF-8
 * byte in any JSON (or text) body. The routes come from the router itself,
 * so a new route is probed without anyone listing it. Message bodies and
 * event data are bytes: storable-bytes.test.ts tests them for taking any
 * byte instead.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_ID_BYTES } from "../../src/domain/storable-text";
import { MAX_QUERY_PARAMETER_BYTES } from "../../src/http/input";
import { appRoutes } from "../support/routes";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { INVOKE_HEADERS, rawRequestTo } from "./fixtures";
import { rowCounts } from "../support/rows";

/**
 * The API's routes: the router is built only to list them (its database is never called). The
 * dashboard's pages answer pages, not JSON, behind a session: test/dashboard.test.ts probes them.
 */
const ROUTES = [
  ...new Set(appRoutes().filter((route) => !route.path.startsWith("/dashboard")).map((route) => `${route.method} ${route.path}`)),
];

/** Bodies with `\u0000` in a string the route reads; every route whose body becomes text or JSON rows. */
const TEXT_BODIES: Record<string, unknown[]> = {
  "POST /v2/batch": [
    [{ destination: "http://127.0.0.1:9/\u0000" }],
    [{ destination: "http://127.0.0.1:9/", headers: { "Upstash-Forward-X-Probe": "a\u0000" } }],
    [{ destination: "http://127.0.0.1:9/", headers: { "X-Probe\u0000": "a" } }],
    [{ destination: "http://127.0.0.1:9/", queue: "q\u0000" }],
  ],
  "POST /v2/batch/trigger": [
    [{ destination: "http://127.0.0.1:9/\u0000" }],
    [{ destination: "http://127.0.0.1:9/", headers: { "Upstash-Forward-X-Probe": "a\u0000" } }],
    [{ destination: "http://127.0.0.1:9/", headers: { "X-Probe\u0000": "a" } }],
  ],
  "DELETE /v2/messages": [{ messageIds: ["msg_\u0000"] }, { url: "http://127.0.0.1:9/\u0000" }],
  "POST /v2/queues": [{ queueName: "q\u0000" }],
  "POST /v2/topics/:name/endpoints": [{ endpoints: [{ url: "http://127.0.0.1:9/\u0000" }] }],
  "DELETE /v2/topics/:name/endpoints": [{ endpoints: [{ url: "http://127.0.0.1:9/", name: "e\u0000" }] }],
  "DELETE /v2/dlq": [{ dlqIds: ["dlq_\u0000"] }, { label: "l\u0000" }],
  "POST /v2/dlq/retry": [{ dlqIds: ["dlq_\u0000"] }],
  "DELETE /v2/workflows/runs": [{ workflowRunIds: ["wfr_\u0000"] }, { workflowUrl: "http://127.0.0.1:9/\u0000" }],
  "DELETE /v2/workflows/runs/:id": ["done\u0000"],
  "DELETE /v2/workflows/dlq": [{ dlqIds: ["dlq_\u0000"] }],
  "POST /v2/workflows/dlq/resume": [{ dlqIds: ["dlq_\u0000"] }],
  "POST /v2/workflows/dlq/restart": [{ dlqIds: ["dlq_\u0000"] }],
  "POST /v2/wait/:eventId": [
    { url: "http://127.0.0.1:9/", step: { stepId: 1, stepName: "wait\u0000", stepType: "Wait" } },
    { url: "http://127.0.0.1:9/", timeoutHeaders: { "X-Probe": ["a\u0000"] }, step: {} },
  ],
};

/** Routes whose body is a message body or event data: bytes, stored as bytea, so any byte goes (storable-bytes.test.ts). */
const BYTE_BODIES = [
  "POST /v2/publish/*",
  "POST /v2/enqueue/:queue/*",
  "POST /v2/trigger/*",
  "POST /v2/schedules/*",
  "POST /v2/notify/:eventId",
  "POST /v2/notify/:runId/:eventId",
  "ALL /v2/workflows/hooks/:userId/:runId/:eventId",
];

/** Routes besides GET ones that read no body (the `ALL` patterns are middleware: input checks, /v2, hooks, /admin). */
const NO_BODY = [
  "ALL /*",
  "ALL /v2/*",
  "ALL /v2/workflows/hooks/*",
  "ALL /metrics",
  "ALL /admin/*",
  "POST /admin/projects/:name",
  "POST /admin/projects/:name/limit",
  "DELETE /admin/projects/:name",
  "DELETE /v2/messages/:id",
  "POST /v2/messages/:id/retry-now",
  "DELETE /v2/queues/:name",
  "POST /v2/queues/:name/pause",
  "POST /v2/queues/:name/resume",
  "DELETE /v2/topics/:name",
  "DELETE /v2/schedules/:id",
  "PATCH /v2/schedules/:id/pause",
  "POST /v2/schedules/:id/pause",
  "PATCH /v2/schedules/:id/resume",
  "POST /v2/schedules/:id/resume",
  "POST /v2/flowControl/:key/pause",
  "POST /v2/flowControl/:key/resume",
  "POST /v2/flowControl/:key/pin",
  "POST /v2/flowControl/:key/unpin",
  "POST /v2/flowControl/:key/resetRate",
  "POST /v2/flowControl/:key/reset",
  "POST /v2/dlq/retry/:dlqId",
  "DELETE /v2/dlq/:dlqId",
  "POST /v2/keys/rotate",
  "POST /v2/rotate",
  "POST /v2/workflows/dlq/resume/:dlqId",
  "POST /v2/workflows/dlq/restart/:dlqId",
  "POST /v2/workflows/dlq/callback/:dlqId",
  "DELETE /v2/workflows/dlq/callback/:dlqId",
  "DELETE /v2/workflows/dlq/:dlqId",
  "POST /v2/destinations/:destination{.+}/open",
  "POST /v2/destinations/:destination{.+}/close",
];

/** Path parameter values: NUL, escapes that are not UTF-8 (a broken sequence, a lone byte, a surrogate), oversize. */
const BAD_SEGMENTS = ["%00", "a%00b", "%C3%28", "%FF", "%ED%A0%80", "x".repeat(MAX_ID_BYTES + 1)];
const BAD_QUERY_VALUES = ["%00", "%C3%28", "%FF", "y".repeat(MAX_QUERY_PARAMETER_BYTES + 1)];
/** A filter several routes read, and configuration read as a header (all a destination route reads of its query). */
const QUERY_NAMES = ["messageId", "Upstash-Forward-X-Probe"];
const DESTINATION = "http://127.0.0.1:9/destination";

interface Probe {
  method: string;
  path: string;
  body?: string | Buffer;
  /** What the error must name. */
  names: string;
}

const dispatch = useDispatch({}, { role: "api" });
const rawRequest = rawRequestTo(dispatch);

beforeAll(async () => {
  // No worker: nothing writes behind the probes' back, so row counts must not move at all.
});

describe("every route refuses bad input with a 4xx and changes nothing", () => {
  it("classifies the body of every route that may take one", () => {
    const unclassified = ROUTES.filter((route) => !route.startsWith("GET "))
      .filter((route) => !(route in TEXT_BODIES) && !BYTE_BODIES.includes(route) && !NO_BODY.includes(route));
    expect(unclassified).toEqual([]);
  });

  it.each(ROUTES)("%s", async (route) => {
    const before = await rowCounts(dispatch, { jobs: true });
    const failures: string[] = [];
    for (const probe of probesOf(route)) {
      const response = await dispatch.api(probe.path, { method: probe.method, body: probe.body });
      const text = await response.text();
      const error = parseError(text);
      const named = error !== null && error.includes(probe.names);
      if (response.status < 400 || response.status > 499 || !named) {
        const sent = `${probe.method} ${probe.path.slice(0, 120)} ${String(probe.body ?? "").slice(0, 80)}`;
        failures.push(`${sent} -> ${response.status} ${text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await rowCounts(dispatch, { jobs: true })).toEqual(before);
  });

  it("refuses a workflow run id or an endpoint URL too long to index, storing nothing", async () => {
    const before = await rowCounts(dispatch, { jobs: true });
    const runId = `wfr_${"r".repeat(MAX_ID_BYTES)}`;
    const trigger = await dispatch.api(`/v2/trigger/${DESTINATION}`, {
      method: "POST",
      headers: { "Upstash-Workflow-RunId": runId },
    });
    expect(trigger.status).toBe(400);
    expect((await trigger.json()).error).toContain("upstash-workflow-runid");
    const url = `${DESTINATION}/${"u".repeat(3000)}`;
    const endpoints = await dispatch.api("/v2/topics/long/endpoints", {
      method: "POST",
      body: JSON.stringify({ endpoints: [{ url }] }),
    });
    expect(endpoints.status).toBe(400);
    expect((await endpoints.json()).error).toContain("endpoint url");
    expect(await rowCounts(dispatch, { jobs: true })).toEqual(before);
  });

  it("refuses an invoke envelope with a NUL in the invoker it stores, storing nothing", async () => {
    const before = await rowCounts(dispatch, { jobs: true });
    const response = await dispatch.api(`/v2/publish/${DESTINATION}`, {
      method: "POST",
      headers: INVOKE_HEADERS,
      body: JSON.stringify({ workflowRunId: "wfr_parent", headers: { "X-Probe": ["a\u0000"] }, body: "payload" }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain("headers.X-Probe");
    expect(await rowCounts(dispatch, { jobs: true })).toEqual(before);
  });

  it("lets node answer 400 itself to a NUL byte in a header, storing nothing", async () => {
    const before = await rowCounts(dispatch, { jobs: true });
    const { status } = await rawRequest(
      Buffer.from(
        `POST /v2/publish/${DESTINATION} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n` +
          "Upstash-Forward-X-Probe: a\u0000b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
      ),
    );
    expect(status).toBe(400);
    expect(await rowCounts(dispatch, { jobs: true })).toEqual(before);
  });
});

/** Every probe of `route` ("METHOD /pattern"). */
function probesOf(route: string): Probe[] {
  const [method, pattern] = route.split(" ") as [string, string];
  const methods = method === "ALL" ? ["GET", "POST"] : [method];
  const destinationRoute = pattern.endsWith("/*") && method !== "ALL";
  // `:name` or `:name{pattern}`: the parameter is `name`.
  const nameOf = (segment: string) => segment.slice(1).replace(/\{.*\}$/, "");
  const parameters = pattern.split("/").filter((segment) => segment.startsWith(":")).map(nameOf);
  const valueOf = (segment: string, bad: Record<string, string>) =>
    segment === "*" ? DESTINATION : segment.startsWith(":") ? (bad[nameOf(segment)] ?? sample(nameOf(segment))) : segment;
  const pathWith = (bad: Record<string, string> = {}) => pattern.split("/").map((segment) => valueOf(segment, bad)).join("/");
  const probes: Probe[] = [];
  for (const verb of methods) {
    for (const name of parameters) {
      for (const bad of BAD_SEGMENTS) probes.push({ method: verb, path: pathWith({ [name]: bad }), names: `"${name}"` });
    }
    // A destination route's other query parameters belong to the destination (storable-bytes.test.ts).
    for (const name of destinationRoute ? QUERY_NAMES.slice(1) : QUERY_NAMES) {
      for (const bad of BAD_QUERY_VALUES) {
        probes.push({ method: verb, path: `${pathWith()}?${name}=${bad}`, names: `"${name}"` });
      }
    }
    for (const badName of destinationRoute ? [] : ["%00", "%FF"]) {
      probes.push({ method: verb, path: `${pathWith()}?${badName}=1`, names: "query parameter name" });
    }
    for (const body of (TEXT_BODIES[route] ?? []).flatMap(badBodies)) {
      probes.push({ method: verb, path: pathWith(), body, names: "body" });
    }
  }
  return probes;
}

/** A valid value for a path parameter, so that only the probed one is bad. */
const sample = (name: string) => (name === "userId" ? "test-user" : "probe");

/**
 * `value` with its NUL as is (a JSON escape in JSON, a byte in text), in its
 * place a byte that is not UTF-8, and in JSON an unpaired surrogate escape.
 */
function badBodies(value: unknown): (string | Buffer)[] {
  const json = typeof value !== "string";
  const text = json ? JSON.stringify(value) : value;
  const [head, tail] = text.split(json ? "\\u0000" : "\u0000") as [string, string];
  const notUtf8 = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
  return json ? [text, notUtf8, `${head}\\ud800${tail}`] : [text, notUtf8];
}

function parseError(text: string): string | null {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    return typeof error === "string" ? error : null;
  } catch {
    return null;
  }
}

