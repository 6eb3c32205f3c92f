/**
 * Parameters of the list and bulk endpoints (docs/hosted-api.md §4, §8, §9): a
 * filter is multi-valued by repeating it or by comma-joining its values; bulk
 * actions also take the legacy JSON body older SDKs send (§16 #10).
 *
 * A name the endpoint does not know is a 400: a mistyped filter must never
 * widen a bulk cancel or delete to "everything".
 */
import type { Context } from "hono";
import { badRequest } from "../domain/errors";
import { MESSAGE_FILTER_FIELDS, type MessageFilter, type Order, type TimeRange } from "../domain/messages/filter";
import { jsonOf, textOf } from "./body";
import { isOwnParameterName } from "./request";

/** Parameters by name, each with every value given, in order. */
export type Params = Map<string, string[]>;

/** At most this many values per parameter (ids or filter values). */
const MAX_VALUES = 1000;

/**
 * The query parameters. The token (`qstash_token`) and webhook-style config
 * (`upstash-*`, `svc-*`, read as headers) are not parameters of the endpoint.
 */
export function queryParams(c: Context, allowed: readonly string[]): Params {
  const params: Params = new Map();
  for (const [name, value] of new URL(c.req.url).searchParams) {
    const lower = name.toLowerCase();
    if (isOwnParameterName(lower)) continue;
    add(params, name, value, allowed);
  }
  return params;
}

/**
 * Query parameters plus the fields of a legacy JSON body such as
 * `{"messageIds": [...]}`: each field a string, a number or an array of them.
 */
export async function bulkParams(c: Context, allowed: readonly string[]): Promise<Params> {
  const params = queryParams(c, allowed);
  const body = jsonOf(c);
  if (body === null && textOf(c).trim() === "") return params;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("the body must be a JSON object of filters, or empty");
  }
  for (const [name, value] of Object.entries(body)) {
    if (value === null) continue;
    const items: unknown[] = Array.isArray(value) ? value : [value];
    // An empty list would otherwise mean "no filter", i.e. everything.
    if (items.length === 0) throw badRequest(`${name} must not be an empty list`);
    for (const item of items) {
      if (typeof item !== "string" && typeof item !== "number") {
        throw badRequest(`${name} must be a string, a number or a list of them`);
      }
      add(params, name, String(item), allowed);
    }
  }
  return params;
}

function add(params: Params, name: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(name)) throw badRequest(`unknown parameter "${name}"; accepted: ${allowed.join(", ")}`);
  const values = params.get(name) ?? [];
  if (values.length >= MAX_VALUES) throw badRequest(`${name} takes at most ${MAX_VALUES} values`);
  values.push(value);
  params.set(name, values);
}

/**
 * Every value of the parameter named `names[0]` (later names are aliases),
 * comma-joined values split unless `split` is false (URLs and paths may hold
 * commas). Null when the parameter was not given; an empty value is a 400.
 */
export function listParam(params: Params, names: string[], split = true): string[] | null {
  const raw = names.flatMap((name) => params.get(name) ?? []);
  if (raw.length === 0) return null;
  const values = (split ? raw.flatMap((value) => value.split(",")) : raw).map((value) => value.trim());
  if (values.some((value) => value === "")) throw badRequest(`${names[0]} must not be empty`);
  if (values.length > MAX_VALUES) throw badRequest(`${names[0]} takes at most ${MAX_VALUES} values`);
  return values;
}

/** The single value of a parameter, null when absent; repeating it is a 400. */
export function singleParam(params: Params, name: string): string | null {
  const values = params.get(name);
  if (values === undefined) return null;
  if (values.length > 1) throw badRequest(`${name} may be given only once`);
  return values[0]!;
}

/** An integer parameter within `[min, max]`, `fallback` when absent. */
export function integerParam(params: Params, name: string, min: number, max: number, fallback: number): number {
  const text = singleParam(params, name);
  if (text === null) return fallback;
  if (!/^\d{1,9}$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw badRequest(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

/** A Unix-milliseconds parameter (`fromDate`, `toDate`), null when absent. */
export function timeParam(params: Params, name: string): number | null {
  const text = singleParam(params, name);
  if (text === null) return null;
  if (!/^\d{1,15}$/.test(text.trim())) throw badRequest(`${name} must be a Unix timestamp in milliseconds, got "${text}"`);
  return Number(text);
}

/** The `order` parameter, `fallback` when absent. */
export function orderParam(params: Params, fallback: Order): Order {
  const text = singleParam(params, "order");
  if (text === null) return fallback;
  if (text !== "earliestFirst" && text !== "latestFirst") {
    throw badRequest(`order must be earliestFirst or latestFirst, got "${text}"`);
  }
  return text;
}

/** The message filter in `params` (aliases: `callerIP` for `callerIp`). */
export function messageFilterParams(params: Params): MessageFilter {
  const filter: MessageFilter = {};
  for (const field of MESSAGE_FILTER_FIELDS) {
    const names = field === "callerIp" ? ["callerIp", "callerIP"] : [field];
    const values = listParam(params, names, field !== "url" && field !== "path");
    if (values !== null) filter[field] = values;
  }
  return filter;
}

/** The `fromDate`/`toDate` window in `params`. */
export function timeRangeParams(params: Params): TimeRange {
  const range = { fromDate: timeParam(params, "fromDate"), toDate: timeParam(params, "toDate") };
  if (range.fromDate !== null && range.toDate !== null && range.fromDate > range.toDate) {
    throw badRequest("fromDate must not be after toDate");
  }
  return range;
}

/** The `responseStatus` filter of the DLQ (`500`, or several: `500,502`), as HTTP status codes; null when absent. */
export function statusCodesParam(params: Params): number[] | null {
  return listParam(params, ["responseStatus"])?.map((text) => {
    if (!/^\d{3}$/.test(text)) throw badRequest(`responseStatus must be an HTTP status code, got "${text}"`);
    return Number(text);
  }) ?? null;
}
