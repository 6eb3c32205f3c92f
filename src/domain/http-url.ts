/** URLs Dispatch sends to: destinations, callbacks, failure callbacks, URL-group endpoints. */
import type { DestinationGuard } from "../outbound/destination-guard";
import { badRequest } from "./errors";

/** `text` when it is an absolute http(s) URL, else a 400 naming `what`. */
export function parseHttpUrl(text: string, what: string): string {
  if (!/^https?:\/\//i.test(text)) throw badRequest(`${what} must be a URL starting with http:// or https://`);
  try {
    new URL(text);
    return text;
  } catch {
    throw badRequest(`${what} is not a valid URL: "${text}"`);
  }
}

/**
 * `url` (valid) unless its host is an IP address the SSRF guard refuses: a
 * 400 naming `what` then, before anything is stored. Host names are judged
 * when they are resolved, at each attempt.
 */
export function checkReachable(url: string, what: string, guard: DestinationGuard): string {
  const refused = guard.refusedLiteral(url);
  if (refused === null) return url;
  throw badRequest(
    `${what} ${refused} is not a public address (the SSRF guard refuses private, loopback, link-local and ` +
      "special-purpose addresses); set DISPATCH_ALLOW_PRIVATE_NETWORKS=true to allow private networks",
  );
}
