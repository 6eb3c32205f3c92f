/**
 * Publishing: `POST /v2/publish/{destination}`, `POST
 * /v2/enqueue/{queueName}/{destination}` and `POST /v2/batch` (docs/hosted-api.md §2).
 */
import { destinationAttributes, madeMessages, tracedRequest } from "../request-span";
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { overLimit, tooLarge } from "../../domain/errors";
import { detectDialect } from "../../domain/headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import type { PublishRequest, PublishResponse } from "../../domain/publish/prepare";
import { Quotas } from "../../domain/projects/quotas";
import { Publisher } from "../../domain/publish/publish";
import type { JsonPath } from "../../domain/storable-text";
import type { Metrics } from "../../observability/metrics";
import { bodyOf, jsonOf } from "../body";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { PUBLISH_HEADER_NOTE, publishHeaders } from "../openapi/parameters";
import { PublishResultSchema } from "../openapi/schemas";
import { callerIp, rawDestination, requestHeaders } from "../request";
import { publishSettings } from "../publish-settings";

const MAX_BATCH_ITEMS = 1000;

const BatchSchema = v.pipe(
  v.array(
    v.object({
      destination: v.string(),
      headers: v.optional(v.record(v.string(), v.string()), {}),
      // Clients send the raw body as a string; a JSON value is taken as its JSON text.
      body: v.optional(v.pipe(v.unknown(), v.transform((body) => (typeof body === "string" ? body : JSON.stringify(body) ?? ""))), ""),
      queue: v.optional(v.string()),
    }),
    "the body must be a JSON array of {destination, headers?, body?, queue?}",
  ),
  v.minLength(1, "a batch needs at least one item"),
);

/** An item's body is the message body: bytes, which may hold anything (the rest must be storable text). */
const isItemBody = (path: JsonPath) => path.length === 2 && path[1] === "body";

const PUBLISHED = {
  description: "The message; a list of them, one per endpoint, when the destination is a URL group.",
  json: v.union([PublishResultSchema, v.array(PublishResultSchema)]),
};
const DUPLICATE = { description: "Every message was a duplicate (Deduplication-Id): nothing new was stored.", json: PUBLISHED.json };
const PUBLISH_DESCRIPTION = [
  "Stores the body with its options and answers at once; the message is delivered later with the method, headers and body given.",
  "The destination is an http(s) URL, a URL group's name (every endpoint gets a message), or `api/llm`.",
  "Headers without the prefix are not forwarded unless `Svc-Header-Forward: true`; name them `Svc-Forward-X` to forward them.",
  PUBLISH_HEADER_NOTE,
].join("\n");

const PUBLISH = operation({
  summary: "Publish a message",
  description: PUBLISH_DESCRIPTION,
  tag: "Publish",
  access: "full-token",
  path: { destination: "An http(s) URL as is (e.g. `https://example.com/hook?a=1`), a URL group's name, or `api/llm`." },
  headers: publishHeaders(),
  body: { bytes: "The message body, any bytes, delivered as given." },
  responses: { 200: PUBLISHED, 202: DUPLICATE },
  errors: [404, 412, 413, 429],
});
const ENQUEUE = operation({
  summary: "Publish a message to a queue",
  description: `As publish; the queue delivers its messages in order, at most its parallelism at once.\n${PUBLISH_HEADER_NOTE}`,
  tag: "Publish",
  access: "full-token",
  path: { queue: "The queue's name (created when new).", destination: "As publish's destination." },
  headers: publishHeaders(),
  body: { bytes: "The message body, any bytes, delivered as given." },
  responses: { 200: PUBLISHED, 202: DUPLICATE },
  errors: [404, 412, 413, 429],
});
const BATCH = operation({
  summary: "Publish several messages",
  description: `Up to ${MAX_BATCH_ITEMS} messages at once, each with its destination and publish headers; all are stored or none.`,
  tag: "Publish",
  access: "full-token",
  body: { name: "batch", json: BatchSchema, isBytes: isItemBody },
  responses: { 200: { description: "One answer per item, in order.", json: v.array(PUBLISHED.json) } },
  errors: [404, 412, 413, 429],
});

/** Routes that create messages. */
export function publishRoutes(deps: AppDeps) {
  const publisher = new Publisher(deps.sql, publishSettings(deps), deps.localDelivery ?? null, new Quotas(deps.sql));
  const run = async (c: Context, requests: PublishRequest[]) => {
    const span = {
      name: "publish",
      attributes: {
        "messaging.batch.message_count": requests.length,
        ...(requests.length === 1
          ? { ...destinationAttributes(requests[0]!.destination), "dispatch.dialect": detectDialect(Object.keys(requests[0]!.headers), deps.config.defaultDialect) }
          : {}),
      },
      made: (responses: PublishResponse[]) =>
        madeMessages(responses.flatMap((response) => (Array.isArray(response) ? response : [response]).map((result) => result.messageId))),
    };
    const responses = await tracedRequest(deps.tracing, c, span, (traceparent) =>
      publisher.publish(traceparent === null ? requests : requests.map((request) => ({ ...request, traceparent }))),
    );
    countPublished(deps.metrics, requests, responses, deps.config.defaultDialect);
    return responses;
  };
  const single = async (c: Context, queueName: string | null, prefix: string) =>
    respond(c, (await run(c, [singleRequest(c, queueName, prefix, deps.config.maxMessageBytes)]))[0]!);

  return new Hono()
    .post("/publish/*", PUBLISH.describe, (c) => single(c, null, "/v2/publish/"))
    .post("/enqueue/:queue/*", ENQUEUE.describe, (c) =>
      single(c, c.req.param("queue"), `/v2/enqueue/${c.req.param("queue")}/`),
    )
    .post("/batch", BATCH.describe, async (c) => {
      const json = jsonOf(c, isItemBody);
      if (Array.isArray(json) && json.length > MAX_BATCH_ITEMS) {
        throw overLimit(`a batch holds at most ${MAX_BATCH_ITEMS} items, got ${json.length}`, null);
      }
      const ip = callerIp(c);
      const requests = BATCH.body(c, json).map((item) => batchRequest(item, c.get("project"), ip, deps.config.maxMessageBytes));
      return c.json(await run(c, requests));
    });
}

function singleRequest(c: Context, queueName: string | null, prefix: string, maxBytes: number): PublishRequest {
  const { headers } = requestHeaders(c);
  return {
    destination: rawDestination(c, prefix),
    headers,
    body: bodyOf(c, maxBytes),
    queueName,
    callerIp: callerIp(c),
    project: c.get("project"),
  };
}

function batchRequest(
  item: v.InferOutput<typeof BatchSchema>[number],
  project: string,
  ip: string | null,
  maxBytes: number,
): PublishRequest {
  const body = Buffer.from(item.body);
  if (body.length > maxBytes) throw tooLarge("a batch item body", maxBytes);
  const headers = Object.fromEntries(Object.entries(item.headers).map(([name, value]) => [name.toLowerCase(), value]));
  // An empty queue name is no queue: the Go client sends `"queue": ""` when none is given (docs/hosted-api.md §2).
  return { destination: item.destination, headers, body, queueName: item.queue || null, callerIp: ip, project };
}

/** 202 when every message was a duplicate (docs/hosted-api.md §2.1), else 200. */
function respond(c: Context, response: PublishResponse) {
  const results = Array.isArray(response) ? response : [response];
  const duplicate = results.length > 0 && results.every((result) => result.deduplicated);
  return c.json(response, duplicate ? 202 : 200);
}

/** Counts accepted and deduplicated messages by project, dialect and destination kind. */
function countPublished(metrics: Metrics, requests: PublishRequest[], responses: PublishResponse[], defaultDialect: Dialect): void {
  responses.forEach((response, i) => {
    const destination = Array.isArray(response) ? "group" : "url" in response ? "url" : "api";
    const request = requests[i]!;
    const labels = { project: metrics.projects.of(request.project), dialect: detectDialect(Object.keys(request.headers), defaultDialect), destination };
    for (const result of Array.isArray(response) ? response : [response]) {
      (result.deduplicated ? metrics.deduplicated : metrics.published).inc(labels);
    }
  });
}
