/**
 * Headers a publisher may not forward because HTTP reserves them for one
 * connection or for the framing of one message (RFC 9110 §7.6.1). Dispatch
 * acts as a proxy here: its outgoing request is a new hop with its own
 * connection, its own body length and the destination URL's own Host, so
 * forwarded copies of these headers are dropped, never sent and never refused.
 */

/**
 * Lower-case names dropped from every forwarded header set: `Connection` and
 * the fields RFC 9110 §7.6.1 tells intermediaries to remove (`Keep-Alive`,
 * `Proxy-Connection`, `TE`, `Transfer-Encoding`, `Upgrade`), `Expect` (an
 * expectation only the direct peer can answer), `Content-Length` (the HTTP
 * client sends the real length of the body it sends), `Trailer` (the body is
 * sent whole, with no trailer section to announce) and `Host` (taken from the
 * destination URL).
 */
const HOP_HEADERS: ReadonlySet<string> = new Set([
  "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
  "expect", "content-length", "trailer", "host",
]);

/**
 * `headers` without the reserved names and without every header that one of
 * its `Connection` values names (RFC 9110 §7.6.1: those apply to one
 * connection only). Names are compared case-insensitively; the rest keep
 * their names and order.
 */
export function withoutHopHeaders(headers: Record<string, string>): Record<string, string> {
  let dropped = HOP_HEADERS;
  for (const name in headers) {
    if (name.toLowerCase() !== "connection") continue;
    const named = new Set(dropped);
    for (const option of headers[name]!.split(",")) named.add(option.trim().toLowerCase());
    dropped = named;
  }
  const kept: Record<string, string> = {};
  for (const name in headers) if (!dropped.has(name.toLowerCase())) kept[name] = headers[name]!;
  return kept;
}
