/**
 * A message's destination: the origin (scheme://host[:port]) of its URL, as
 * WHATWG's `URL.origin` spells it (lower case, no user info, no default
 * port). It is stored with the message (`messages.destination`) and names
 * the row of `dispatch.destinations`: the unit of fair delivery slots and of
 * circuit breakers. An origin, not a host, since a host's ports are often
 * different services, and not a URL, since the paths of one server share its
 * capacity and its outages.
 */

/** The destination of `url` (itself when it is not a URL, which a stored message's never is). */
export function destinationOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
