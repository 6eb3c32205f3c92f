/**
 * Publishing: `POST /v2/publish/{destination}`, `POST
 * /v2/enqueue/{queueName}/{destination}` and `POST /v2/batch` (docs/hosted-api.md §2).
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { llmUrl } from "../../config/config";
import { badRequest, overLimit, tooLarge } from "../../domain/errors";
import { detectDialect } from "../../domain/headers/dialect";
import { messageSettings } from "../../domain/publish/options";
import type { PublishRequest, PublishResponse } from "../../domain/publish/prepare";
import { Publisher } from "../../domain/publish/publisher";
import type { JsonPath } from "../../domain/storable-text";
import type { Metrics } from "../../observability/metrics";
import { bodyOf, jsonOf } from "../body";
import type { AppDeps } from "../deps";
import { callerIp, rawDestination, requestHeaders } from "../request";

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

/** Routes that create messages. */
export function publishRoutes(deps: AppDeps) {
  const publisher = new Publisher(deps.sql, { ...messageSettings(deps.config), llmUrl: llmUrl(deps.config) });
  const run = async (requests: PublishRequest[]) => {
    const responses = await publisher.publish(requests);
    countPublished(deps.metrics, requests, responses);
    return responses;
  };
  const single = async (c: Context, queueName: string | null, prefix: string) =>
    respond(c, (await run([singleRequest(c, queueName, prefix, deps.config.maxMessageBytes)]))[0]!);

  return new Hono()
    .post("/publish/*", (c) => single(c, null, "/v2/publish/"))
    .post("/enqueue/:queue/*", (c) =>
      single(c, c.req.param("queue"), `/v2/enqueue/${c.req.param("queue")}/`),
    )
    .post("/batch", async (c) => {
      const json = jsonOf(c, isItemBody);
      if (Array.isArray(json) && json.length > MAX_BATCH_ITEMS) {
        throw overLimit(`a batch holds at most ${MAX_BATCH_ITEMS} items, got ${json.length}`, null);
      }
      const items = v.safeParse(BatchSchema, json);
      if (!items.success) throw badRequest(`invalid batch: ${issueText(items.issues[0]!)}`);
      const ip = callerIp(c);
      const requests = items.output.map((item) => batchRequest(item, ip, deps.config.maxMessageBytes));
      return c.json(await run(requests));
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
  };
}

function batchRequest(item: v.InferOutput<typeof BatchSchema>[number], ip: string | null, maxBytes: number): PublishRequest {
  const body = Buffer.from(item.body);
  if (body.length > maxBytes) throw tooLarge("a batch item body", maxBytes);
  const headers = Object.fromEntries(Object.entries(item.headers).map(([name, value]) => [name.toLowerCase(), value]));
  return { destination: item.destination, headers, body, queueName: item.queue ?? null, callerIp: ip };
}

/** 202 when every message was a duplicate (docs/hosted-api.md §2.1), else 200. */
function respond(c: Context, response: PublishResponse) {
  const results = Array.isArray(response) ? response : [response];
  const duplicate = results.length > 0 && results.every((result) => result.deduplicated);
  return c.json(response, duplicate ? 202 : 200);
}

/** An issue with where it is, e.g. `[2].headers.x-a: Invalid type: ...`. */
function issueText(issue: v.BaseIssue<unknown>): string {
  const path = (issue.path ?? []).map((item) => (typeof item.key === "number" ? `[${item.key}]` : `.${String(item.key)}`));
  return `${path.join("").replace(/^\./, "")}${path.length > 0 ? ": " : ""}${issue.message}`;
}

/** Counts accepted and deduplicated messages by dialect and destination kind. */
function countPublished(metrics: Metrics, requests: PublishRequest[], responses: PublishResponse[]): void {
  responses.forEach((response, i) => {
    const destination = Array.isArray(response) ? "group" : "url" in response ? "url" : "api";
    const labels = { dialect: detectDialect(Object.keys(requests[i]!.headers)), destination };
    for (const result of Array.isArray(response) ? response : [response]) {
      (result.deduplicated ? metrics.deduplicated : metrics.published).inc(labels);
    }
  });
}
