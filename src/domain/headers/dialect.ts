/**
 * Header dialects (docs/decisions.md §2): the native `Svc-` prefix and the
 * compat `Upstash-` prefix. A message remembers its dialect, and every header
 * Dispatch adds to its outgoing requests uses that dialect's prefix.
 */

import type { Dialect } from "../../db/vocabulary";

/** Header prefix of each dialect, in canonical case. */
export const PREFIX: Record<Dialect, string> = { svc: "Svc-", upstash: "Upstash-" };

/** Issuer of the signature JWT; the official compat SDKs require `Upstash`. */
export const ISSUER: Record<Dialect, string> = { svc: "Dispatch", upstash: "Upstash" };

/** User-Agent of outgoing requests. */
export const USER_AGENT: Record<Dialect, string> = { svc: "Dispatch", upstash: "Upstash-QStash" };

/**
 * The dialect of a request from its (lower-case) header names: native when any
 * `svc-` header is present, compat when any `upstash-` header is, else
 * `fallback` (DISPATCH_DEFAULT_DIALECT): a request with neither says nothing,
 * and the Python and Go clients send no prefixed header for a plain publish
 * (docs/hosted-api.md §2).
 */
export function detectDialect(headerNames: Iterable<string>, fallback: Dialect = "svc"): Dialect {
  let compat = false;
  for (const name of headerNames) {
    if (name.startsWith("svc-")) return "svc";
    if (name.startsWith("upstash-")) compat = true;
  }
  return compat ? "upstash" : fallback;
}
