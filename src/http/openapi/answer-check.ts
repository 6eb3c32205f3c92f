/**
 * A development aid (DISPATCH_CHECK_ANSWERS, on in the test suite): every
 * JSON answer is checked, strictly, against what the API document says the
 * operation that gave it answers. A field the document does not describe, a
 * missing one it requires, a wrong type or an undocumented status is logged
 * as an internal error, which fails the test that caused it
 * (test/support/no-internal-errors.ts): the document and the answers cannot
 * drift apart. The JSON schemas are the document's own (document.ts), with
 * `additionalProperties: false` wherever an object lists its properties;
 * header maps and other records keep their value schemas. Ajv is imported at
 * the first answer checked: a service without the aid never loads it.
 */
import type { Ajv2020 as Ajv, ValidateFunction } from "ajv/dist/2020.js";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Log } from "../../observability/log";
import { ERROR_SCHEMA, responsesOf } from "./document";
import { answeringOperation, type OperationSpec } from "./operation";

type Json = Record<string, unknown>;

/**
 * The compiled validators, shared by every app of the process: the operation
 * specs are module constants, and compiling a schema (Ajv generates code)
 * costs far more than checking an answer. Built at the first answer checked.
 */
let shared: { ajv: Ajv; validators: WeakMap<OperationSpec, Map<string, ValidateFunction | null>> } | undefined;

/** The validator of `spec`'s answer to `method` with `status`: null if it answers no JSON, undefined if it has no such answer. */
async function validatorOf(spec: OperationSpec, method: string, status: number): Promise<ValidateFunction | null | undefined> {
  shared ??= { ajv: new (await import("ajv/dist/2020.js")).Ajv2020({ strict: false, allErrors: true }), validators: new WeakMap() };
  const { ajv, validators } = shared;
  const bySpec = validators.get(spec) ?? new Map<string, ValidateFunction | null>();
  validators.set(spec, bySpec);
  const key = `${method} ${status}`;
  if (!bySpec.has(key)) {
    const answer = responsesOf(spec, method)[String(status)] as { content?: Record<string, { schema?: Json }> } | undefined;
    if (answer === undefined) return undefined;
    const schema = answer.content?.["application/json"]?.schema;
    bySpec.set(key, schema === undefined ? null : ajv.compile(strict(schema)));
  }
  return bySpec.get(key);
}

/** The middleware; `log` hears each mismatch. */
export function checkAnswers(log: Log): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const spec = answeringOperation(c);
    if (!spec || !(c.res.headers.get("content-type") ?? "").includes("application/json")) return;
    const validate = await validatorOf(spec, c.req.method.toLowerCase(), c.res.status);
    const where = `${c.req.method} ${routePath(c, -1)} (${c.res.status})`;
    if (validate === undefined) return void log(`internal error: the API document gives ${where} no such answer`, { level: "error" });
    if (validate === null) return void log(`internal error: the API document says ${where} answers no JSON`, { level: "error" });
    const body: unknown = await c.res.clone().json();
    if (!validate(body)) {
      const problems = (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message}${extra(error.params)}`);
      log(`internal error: the answer of ${where} is not what the API document says: ${problems.join("; ")}`, { level: "error" });
    }
  };
}

/** The name an `additionalProperties` error is about. */
function extra(params: Record<string, unknown>): string {
  return typeof params.additionalProperty === "string" ? ` (${params.additionalProperty})` : "";
}

/** `schema` with every object that lists its properties closed to others, and the Error reference resolved. */
function strict(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(strict) as unknown as Json;
  if (typeof schema !== "object" || schema === null) return schema as Json;
  const node = schema as Json;
  if (node.$ref === "#/components/schemas/Error") return strict(ERROR_SCHEMA);
  const copy: Json = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, strict(value)]));
  if (node.properties !== undefined && (node.additionalProperties === undefined || node.additionalProperties === true)) {
    copy.additionalProperties = false;
  }
  return copy;
}
