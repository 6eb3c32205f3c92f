/**
 * The span of a publish request (observability/tracing.ts): a child of the
 * publisher's `traceparent` header when it sent a valid one. The trace
 * context stored with the messages, which their attempts are children of, is
 * the publisher's (so the attempts sit beside the publish in the publisher's
 * trace), or this span's when the publisher sent none. Off, nothing is made
 * or stored.
 */
import type { Context } from "hono";
import { AppError } from "../domain/errors";
import type { PublishRequest, PublishResponse } from "../domain/publish/prepare";
import type { Tracing } from "../observability/tracing";

/** Publishes `requests` with `publish` inside a publish span, each request carrying the trace its messages join. */
export async function tracedPublish(
  tracing: Tracing,
  c: Context,
  requests: PublishRequest[],
  publish: (requests: PublishRequest[]) => Promise<PublishResponse[]>,
): Promise<PublishResponse[]> {
  if (!tracing.enabled) return publish(requests);
  const incoming = tracing.parse(c.req.header("traceparent"));
  const span = tracing.start("publish", "producer", incoming, {
    "messaging.system": "dispatch",
    "messaging.operation.type": "send",
    "dispatch.project": c.get("project"),
    "messaging.batch.message_count": requests.length,
    ...(requests.length === 1 ? destinationOf(requests[0]!) : {}),
  });
  if (span === null) return publish(requests);
  const traced = requests.map((request) => ({ ...request, traceparent: incoming ?? span.traceparent }));
  try {
    const responses = await publish(traced);
    const ids = responses.flatMap((response) => (Array.isArray(response) ? response : [response]).map((result) => result.messageId));
    span.set(ids.length === 1 ? { "messaging.message.id": ids[0]! } : { "dispatch.message_count": ids.length });
    span.end();
    return responses;
  } catch (error) {
    // The status only: an error's text may quote the request (a destination URL with credentials in it).
    span.end(error instanceof AppError ? `status ${error.status}` : "internal error");
    throw error;
  }
}

/** The destination as a span may name it: a URL's host (never its path or query), or the URL group's or API's name. */
function destinationOf(request: PublishRequest): Record<string, string> {
  if (!/^https?:\/\//i.test(request.destination)) return { "dispatch.destination": request.destination.slice(0, 200) };
  try {
    return { "server.address": new URL(request.destination).hostname };
  } catch {
    return {};
  }
}
