/**
 * The API document (OpenAPI 3.1), built from the routes of the app: each
 * route's operation (openapi/operation.ts) gives its summary, parameters,
 * body and answers; path parameters come from the route's own pattern. JSON
 * schemas are the request validators' valibot schemas, converted by
 * @valibot/to-json-schema.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type { RouterRoute } from "hono/types";
import type * as v from "valibot";
import { type Access, type BodySpec, type OperationSpec, operationOf, type ParameterDoc, type ResponseDoc, type Tag } from "./operation";

type Json = Record<string, unknown>;

/** The methods OpenAPI names (`all` routes list theirs in `methods`). */
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const ERROR_TEXT: Record<number, string> = {
  400: "Bad input; nothing was changed.",
  401: "Missing or unknown token.",
  403: "A read-only token asked to change something, or to read what only a full token reads; or a token of a project other than the default asked for what every project shares.",
  404: "Not found.",
  409: "Conflicts with the current state.",
  412: "Over a limit (the message names the setting that raises it).",
  413: "The body exceeds the maximum message size.",
  429: "Too many requests, or over the project's quota: a daily quota answers with RateLimit-Limit, -Remaining and -Reset, a rate with Burst-RateLimit-Limit, -Remaining and -Reset.",
  503: "The database is unavailable; nothing was changed. Retry after `Retry-After` seconds.",
};

/**
 * A body of any bytes, kept with its content type: JSON and text are named
 * first so that the reference offers a text box for them ("try it"), not a
 * file picker.
 */
const BYTES = {
  "application/json": { schema: {}, example: { hello: "world" } },
  "text/plain": { schema: { type: "string" } },
  "*/*": { schema: { type: "string", format: "binary" } },
};

/** What every error answers. */
export const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" }, requestId: { type: "string", description: "The request's id, on a 500." } },
};

/**
 * The groups of the document, in the order the reference shows them
 * (publishing first, health and metrics last), each with its one line.
 */
export const TAGS: Record<Tag, string> = {
  Publish: "Publish a message to a URL, a URL group or a queue, now or later; or several at once.",
  Messages: "The messages published: get one, cancel one or many.",
  Queues: "Queues deliver their messages in order, so many at a time (parallelism); pause and resume them.",
  "URL groups": "Named lists of endpoints: publishing to a group sends a message to each endpoint.",
  Schedules: "Publish a message on a cron schedule; pause, resume and delete schedules.",
  DLQ: "Messages whose every attempt failed: inspect, retry or delete them.",
  Logs: "What happened to each message, one entry per state change and attempt.",
  "Flow control": "Keys that limit how many messages run at once and per period; pause, pin and reset them.",
  Destinations: "Each origin Dispatch delivers to, its circuit breaker and health; open or close a circuit by hand (a Dispatch extension).",
  Workflows: "Workflow runs (the workflow SDKs' protocol): start, notify, list, cancel; the workflow DLQ.",
  "Signing keys": "The keys that sign each delivery (Upstash-Signature), and their rotation.",
  Projects:
    "The projects one Dispatch serves, each with its own tokens, signing keys and data (a Dispatch extension): create, list, limit and delete them with DISPATCH_ADMIN_TOKEN, as `dispatch project` does.",
  Operations: "Health, readiness, metrics, this document and its reference page.",
};

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

/** The OpenAPI document of `routes` (an app's `routes`). */
export function apiDocument(routes: RouterRoute[], info: DocumentInfo): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const spec = operationOf(route.handler);
    if (!spec) continue;
    const path = openApiPath(route.path);
    const methods = route.method === "ALL" ? (spec.methods ?? ["get", "post"]) : [route.method];
    for (const method of methods.map((m) => m.toLowerCase()).filter((m) => METHODS.includes(m))) {
      paths[path] = { ...paths[path], [method]: operationObject(spec, route.path, method) };
    }
  }
  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/", description: "This Dispatch server." }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: byTag(paths),
    components: {
      securitySchemes: {
        token: { type: "http", scheme: "bearer", description: "An access token (DISPATCH_TOKEN, or the one `dispatch token` prints). `?qstash_token=` works too." },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
  };
}

/** `/v2/queues/:name` → `/v2/queues/{name}`; a final `*` is the `{destination}` URL. */
export function openApiPath(pattern: string): string {
  const path = pattern.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, "{$1}").replace(/\/\*$/, "/{destination}");
  return path.length > 1 ? path.replace(/\/$/, "") : path;
}

function operationObject(spec: OperationSpec, pattern: string, method: string): Json {
  const body = spec.body ? requestBody(spec.body, Object.keys(spec.query ?? {})) : undefined;
  return {
    operationId: operationId(method, pattern),
    summary: spec.summary,
    ...(spec.description !== undefined && { description: spec.description }),
    tags: [spec.tag],
    parameters: [...pathParameters(spec, pattern), ...queryParameters(spec), ...headerParameters(spec)],
    ...(body !== undefined && { requestBody: body }),
    responses: responsesOf(spec, method),
    security: spec.access === "public" ? [] : [{ token: [] }],
  };
}

/** `delete /v2/queues/:name` → `deleteV2QueuesName`: unique per method and path. */
function operationId(method: string, pattern: string): string {
  const words = pattern.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
}

function pathParameters(spec: OperationSpec, pattern: string): Json[] {
  const names = [...pattern.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  if (pattern.endsWith("/*")) names.push("destination");
  return names.map((name) => ({
    name,
    in: "path",
    required: true,
    description: spec.path?.[name] ?? (name === "destination" ? "The destination URL, as is (e.g. `https://example.com/hook?a=1`)." : name),
    schema: { type: "string" },
  }));
}

function queryParameters(spec: OperationSpec): Json[] {
  return Object.entries(spec.query ?? {}).map(([name, doc]) => parameter(name, "query", doc));
}

function headerParameters(spec: OperationSpec): Json[] {
  return (spec.headers ?? []).map((header) => ({
    name: header.name,
    in: "header",
    required: header.required ?? false,
    description: header.description,
    schema: { type: "string" },
  }));
}

function parameter(name: string, where: "query", doc: ParameterDoc): Json {
  const { description, type, required } = typeof doc === "string" ? { description: doc, type: "string", required: false } : doc;
  return { name, in: where, required: required ?? false, description, schema: { type } };
}

function requestBody(body: BodySpec, queryNames: string[]): Json {
  if ("json" in body) {
    return { required: true, ...(body.description && { description: body.description }), content: { "application/json": { schema: jsonSchema(body.json) } } };
  }
  if ("filters" in body) {
    const value = { type: ["string", "number", "array"], items: { type: ["string", "number"] } };
    const schema = { type: "object", additionalProperties: false, properties: Object.fromEntries(queryNames.map((name) => [name, value])) };
    return { required: false, description: body.filters, content: { "application/json": { schema } } };
  }
  if ("bytes" in body) return { description: body.bytes, content: BYTES };
  return { description: body.text, content: { "text/plain": { schema: { type: "string" } } } };
}

/** The answers of `spec` when called with `method`, by status, as the document gives them. */
export function responsesOf(spec: OperationSpec, method: string): Json {
  const answers: Json = {};
  for (const [status, doc] of Object.entries(spec.responses)) answers[status] = response(doc);
  for (const status of errorStatuses(spec)) {
    answers[status] ??= { description: ERROR_TEXT[status] ?? "Error.", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  }
  return answers;
}

function response(doc: ResponseDoc): Json {
  const { description, json, contentType } = typeof doc === "string" ? { description: doc, json: undefined, contentType: undefined } : doc;
  if (contentType !== undefined) return { description, content: { [contentType]: { schema: { type: "string" } } } };
  return { description, content: { "application/json": { schema: json ? jsonSchema(json) : { type: "object" } } } };
}

/** 400 always; those of the access; the operation's own; a database outage where it reads the database. */
function errorStatuses(spec: OperationSpec): number[] {
  const access: Record<Access, number[]> = {
    read: [401],
    "full-token": [401, 403],
    "metrics-token": [401],
    "admin-token": [401],
    public: [],
  };
  const shared = spec.shared ? [403] : [];
  return [...new Set([400, ...access[spec.access], ...shared, ...(spec.errors ?? []), ...(spec.database === false ? [] : [503])])].sort();
}

function jsonSchema(schema: v.GenericSchema): Json {
  const { $schema: _, ...rest } = toJsonSchema(schema, { target: "draft-2020-12", errorMode: "ignore", typeMode: "input" }) as Json;
  return rest;
}

/** The paths grouped in the order of TAGS (by the tag of a path's first operation), by path within a group. */
function byTag(paths: Record<string, Json>): Record<string, Json> {
  const order: string[] = Object.keys(TAGS);
  const rank = (operations: Json) => order.indexOf((Object.values(operations)[0] as { tags: Tag[] }).tags[0]!);
  return Object.fromEntries(Object.entries(paths).sort(([a, x], [b, y]) => rank(x) - rank(y) || a.localeCompare(b)));
}
