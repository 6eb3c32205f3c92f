/**
 * Query parameters of the dashboard's pages. Filter forms submit every field,
 * empty ones included: an empty value means "no filter" here. A name the page
 * does not know is a 400, as on the API. Times come from `datetime-local`
 * inputs, read as UTC, or from a `since` preset.
 */
import type { Context } from "hono";
import { badRequest } from "../../domain/errors";
import type { TimeRange } from "../../domain/messages/filter";
import type { Params } from "../query";

/** The page's non-empty query parameters; an unknown name is a 400. */
export function pageParams(c: Context, allowed: readonly string[]): Params {
  const params: Params = new Map();
  for (const [name, value] of new URL(c.req.url).searchParams) {
    if (!allowed.includes(name)) throw badRequest(`unknown parameter "${name}"; accepted: ${allowed.join(", ")}`);
    if (value.trim() === "") continue;
    params.set(name, [...(params.get(name) ?? []), value.trim()]);
  }
  return params;
}

/** The first value of `name`, or null. */
export const first = (params: Params, name: string) => params.get(name)?.[0] ?? null;

/** Presets of the time filter, in milliseconds before now. */
export const SINCE: Record<string, number> = { "15m": 900_000, "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000 };

/** The window of `since` (a preset), else of `from`/`to` (`YYYY-MM-DDTHH:MM[:SS]`, UTC). */
export function rangeParams(params: Params, now: number): TimeRange {
  const since = first(params, "since");
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
  const text = first(params, name);
  if (text === null) return null;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text) ? Date.parse(`${text}Z`) : Number.NaN;
  if (Number.isNaN(ms)) throw badRequest(`${name} must be a UTC time such as 2025-01-31T09:30, got "${text}"`);
  return ms;
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
