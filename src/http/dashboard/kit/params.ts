/**
 * Query parameters of the dashboard's pages, read by the API's own readers
 * (http/query.ts): a name the page does not know is a 400, a single-valued
 * parameter given twice is a 400. Filter forms submit every field, empty ones
 * included: an empty value means "no filter" here. Times come from
 * `datetime-local` inputs, read as UTC, or from a `since` preset.
 */
import type { Context } from "hono";
import { badRequest } from "../../../domain/errors";
import type { TimeRange } from "../../../domain/messages/filter";
import { type Params, queryParams, singleParam } from "../../query";

/** The page's non-empty query parameters, trimmed; an unknown name is a 400. */
export function pageParams(c: Context, allowed: readonly string[]): Params {
  const params = queryParams(c, allowed);
  for (const [name, values] of params) {
    const given = values.map((value) => value.trim()).filter((value) => value !== "");
    if (given.length === 0) params.delete(name);
    else params.set(name, given);
  }
  return params;
}

/** Presets of the time filter, in milliseconds before now. */
export const SINCE: Record<string, number> = { "15m": 900_000, "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000 };

/** The window of `since` (a preset), else of `from`/`to` (`YYYY-MM-DDTHH:MM[:SS]`, UTC). */
export function rangeParams(params: Params, now: number): TimeRange {
  const since = singleParam(params, "since");
  if (since !== null) {
    const ms = SINCE[since];
    if (ms === undefined) throw badRequest(`since must be one of ${Object.keys(SINCE).join(", ")}, got "${since}"`);
    return { fromDate: now - ms, toDate: null };
  }
  const range = { fromDate: instant(params, "from"), toDate: instant(params, "to") };
  if (range.fromDate !== null && range.toDate !== null && range.fromDate > range.toDate) {
    throw badRequest("from must not be after to");
  }
  return range;
}

function instant(params: Params, name: string): number | null {
  const text = singleParam(params, name);
  if (text === null) return null;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? Date.parse(`${text}Z`) : Number.NaN;
  if (Number.isNaN(ms)) throw badRequest(`${name} must be a UTC time such as 2025-01-31T09:30, got "${text}"`);
  return ms;
}

/** How a body is shown: pretty-printed JSON, text, or a hex dump. */
export type BodyView = "text" | "json" | "hex";

/** How a page shows a body (`body=text|json|hex`); null for the view it reads best in. */
export function bodyViewParam(params: Params): BodyView | null {
  const text = singleParam(params, "body");
  if (text === null) return null;
  if (text !== "text" && text !== "json" && text !== "hex") throw badRequest(`body must be text, json or hex, got "${text}"`);
  return text;
}

/** A page-relative link: `path` with the non-empty `params` (later ones replace earlier ones). */
export function linkTo(path: string, ...params: Record<string, string | null | undefined>[]): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(Object.assign({}, ...params) as Record<string, string | null | undefined>)) {
    if (value !== null && value !== undefined && value !== "") search.set(name, value);
  }
  const query = search.toString();
  return query === "" ? path : `${path}?${query}`;
}

/** The page of the message `id`. */
export const messagePath = (id: string) => `/dashboard/messages/${encodeURIComponent(id)}`;

/** The page of the DLQ entry `id`. */
export const dlqEntryPath = (id: string) => `/dashboard/dlq/${encodeURIComponent(id)}`;

/** The page of the workflow run `id`. */
export const runPath = (id: string) => `/dashboard/workflows/${encodeURIComponent(id)}`;

/** The page of the schedule `id`. */
export const schedulePath = (id: string) => `/dashboard/schedules/${encodeURIComponent(id)}`;

/**
 * Where a paged list is: its cursor (`after`) and search. A list's action
 * forms carry them (`fields`), and the action redirects back to the same page.
 */
export type ListPlace = Record<"after" | "search", string | null>;

/** The place an action's form carried (`ListPlace`), for its redirect. */
export const placeOf = (form: Map<string, string>): ListPlace => ({ after: form.get("after") ?? null, search: form.get("search") ?? null });

/** The place as hidden form fields: the ones that are set. */
export const placeFields = (place: ListPlace): Record<string, string> =>
  Object.fromEntries(Object.entries(place).filter((entry): entry is [string, string] => entry[1] !== null && entry[1] !== ""));
