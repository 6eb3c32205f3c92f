/**
 * An operation of the API, written once: what a route takes (path, query
 * and header parameters, body) and what it answers. A route mounts
 * `op.describe` in front of its handler and reads its input through the
 * operation — `op.body(c)` parses the JSON body with the operation's schema,
 * `op.query(c)` and `op.bulk(c)` accept exactly the query parameters it
 * lists — so the API document built from the operations
 * (openapi/document.ts) is what validates requests and cannot drift from
 * them. A route with no operation is missing from the document, which a
 * test catches.
 */
import type { Context, MiddlewareHandler } from "hono";
import * as v from "valibot";
import { DEFAULT_PROJECT } from "../../db/vocabulary";
import { AppError, badRequest } from "../../domain/errors";
import type { JsonPath } from "../../domain/storable-text";
import { jsonOf } from "../body";
import { bulkParams, type Params, queryParams } from "../query";

/** The groups the reference shows operations in, one per resource. */
export type Tag =
  | "Publish"
  | "Messages"
  | "Logs"
  | "DLQ"
  | "Queues"
  | "URL groups"
  | "Schedules"
  | "Flow control"
  | "Destinations"
  | "Signing keys"
  | "Workflows"
  | "Operations"
  | "Projects";

/** A parameter's meaning, or its meaning and the type its text holds. */
export type ParameterDoc = string | { description: string; type: "integer" | "boolean"; required?: boolean };

/** A request header the operation reads. */
export interface HeaderDoc {
  name: string;
  description: string;
  required?: boolean;
}

/** What the request body is. */
export type BodySpec =
  /** JSON checked against `schema`; a failure is a 400 `invalid <name>: ...`. */
  | { json: v.GenericSchema; name: string; description?: string; isBytes?: (path: JsonPath) => boolean }
  /** Bytes of any content type, kept as given (a message body, event data). */
  | { bytes: string }
  /** UTF-8 text. */
  | { text: string }
  /** Optional: a JSON object of the query parameters (what older SDKs send to bulk actions), read by `op.bulk`. */
  | { filters: string };

/** An answer: its meaning, and the schema of its JSON when it has one worth stating. */
export type ResponseDoc = string | { description: string; json?: v.GenericSchema; contentType?: string };

/**
 * Who may call the operation: every operation says (there is no default), so
 * what a read-only token may do is the list of operations declared `read`.
 */
export type Access =
  /** Any access token, read-only ones included: an operation that reads and changes nothing. */
  | "read"
  /** A full access token only: everything that changes something, and what reveals secrets. */
  | "full-token"
  /** An access token or DISPATCH_METRICS_TOKEN. */
  | "metrics-token"
  /** DISPATCH_ADMIN_TOKEN only: the projects' administration. */
  | "admin-token"
  /** No token. */
  | "public";

export interface OperationSpec<B extends BodySpec | undefined = BodySpec | undefined> {
  summary: string;
  description?: string;
  tag: Tag;
  access: Access;
  /** Path parameters by name (`:name` in the route; `*` is `destination`, the rest of the path). */
  path?: Record<string, string>;
  /** Query parameters by name: the only ones `op.query` and `op.bulk` accept. */
  query?: Record<string, ParameterDoc>;
  headers?: HeaderDoc[];
  body?: B;
  /** The successful answers by status. */
  responses: Record<number, ResponseDoc>;
  /** Error statuses this operation may answer besides 400 and those of its access and of a database outage (503). */
  errors?: number[];
  /** False when it answers without the database (no 503). */
  database?: boolean;
  /**
   * What every project shares (destinations' health): answered to the default
   * project's tokens, the operator's, and a 403 to another project's.
   */
  shared?: true;
  /** The methods a route registered for any method (`all`) answers. */
  methods?: string[];
}

/** What a route uses: the middleware that marks it, and its readers of the input. */
export interface Operation<B extends BodySpec | undefined> {
  spec: OperationSpec<B>;
  /** Mounted in front of the handler; marks the route as this operation. */
  describe: MiddlewareHandler;
  /** The JSON body (or `json`, when the route read it already) parsed with the operation's schema. */
  body: (c: Context, json?: unknown) => B extends { json: infer S extends v.GenericSchema } ? v.InferOutput<S> : never;
  /** The query parameters, only those the operation lists. */
  query: (c: Context) => Params;
  /** The query parameters plus a legacy JSON body of the same names (bulk actions). */
  bulk: (c: Context) => Promise<Params>;
}

const operations = new WeakMap<object, OperationSpec>();

/** An operation from its spec. */
export function operation<B extends BodySpec | undefined = undefined>(spec: OperationSpec<B>): Operation<B> {
  // The last operation marked is the one whose handler answered: a route that hands a request on lets the next mark it.
  const describe: MiddlewareHandler = async (c, next) => {
    // A read-only token may call what is declared `read`, and nothing else (server/middleware.ts requireToken).
    if (spec.access === "full-token" && c.get("access") === "readonly") {
      throw new AppError(403, `this token is read-only: ${c.req.method} ${c.req.path} needs a full token`);
    }
    if (spec.shared && c.get("project") !== DEFAULT_PROJECT) {
      throw new AppError(403, `${c.req.method} ${c.req.path} concerns what every project shares: only the default project's tokens may call it`);
    }
    c.set("operation", spec as OperationSpec);
    await next();
  };
  operations.set(describe, spec as OperationSpec);
  const names = Object.keys(spec.query ?? {});
  return {
    spec,
    describe,
    body: (c, json) => parseJson(c, spec.body, json) as ReturnType<Operation<B>["body"]>,
    query: (c) => queryParams(c, names),
    bulk: (c) => bulkParams(c, names),
  };
}

/** The operation of the route that answered the request of `c`, once it has. */
export function answeringOperation(c: Context): OperationSpec | undefined {
  return c.get("operation");
}

/** The operation a route handler marks, if it is an operation's `describe`. */
export function operationOf(handler: unknown): OperationSpec | undefined {
  return typeof handler === "function" ? operations.get(handler) : undefined;
}

function parseJson(c: Context, body: BodySpec | undefined, json: unknown): unknown {
  if (body === undefined || !("json" in body)) throw new Error("this operation takes no JSON body");
  const parsed = v.safeParse(body.json, withoutNulls(json === undefined ? jsonOf(c, body.isBytes) : json, body.isBytes));
  if (!parsed.success) throw badRequest(`invalid ${body.name}: ${issueText(parsed.issues[0]!)}`);
  return parsed.output;
}

/**
 * `json` with every object field whose value is null left out: null is
 * "absent" in every JSON body the API reads (docs/hosted-api.md §1.5), as
 * clients that always send every key (the Python client's `"queue": null`,
 * `"body": null`) mean it. Message bodies (`isBytes`) are kept as they are.
 */
export function withoutNulls(json: unknown, isBytes: (path: JsonPath) => boolean = () => false, path: JsonPath = []): unknown {
  if (path.length > 0 && isBytes(path)) return json;
  if (Array.isArray(json)) return json.map((item, index) => withoutNulls(item, isBytes, [...path, index]));
  if (typeof json !== "object" || json === null) return json;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) if (value !== null) kept[key] = withoutNulls(value, isBytes, [...path, key]);
  return kept;
}

/** An issue with where it is, e.g. `[2].headers.x-a: Invalid type: ...`. */
function issueText(issue: v.BaseIssue<unknown>): string {
  const path = (issue.path ?? []).map((item) => (typeof item.key === "number" ? `[${item.key}]` : `.${String(item.key)}`));
  return `${path.join("").replace(/^\./, "")}${path.length > 0 ? ": " : ""}${issue.message}`;
}
