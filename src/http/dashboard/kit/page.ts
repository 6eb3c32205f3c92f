/** What a page handler reads besides the domain: the clock times are shown against, and its own address. */
import type { Context } from "hono";
import type { AppDeps } from "../../deps";

/** The clock pages show times against (the service's, which tests may move). */
export const nowOf = (deps: AppDeps) => deps.now?.() ?? Date.now();

/** The request's path and query, for a live region to fetch again. */
export const currentUrl = (c: Context) => {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
};
