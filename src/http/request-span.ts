/**
 * The span of a request that makes messages (a publish, a workflow trigger;
 * observability/tracing.ts): a child of the caller's `traceparent` header
 * when it sent a valid one. The trace context stored with the messages,
 * which their attempts are children of, is the caller's (so the attempts sit
 * beside this span in the caller's trace), or this span's when the caller
 * sent none. Off, nothing is made or stored.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Context } from "hono";
import { AppError } from "../domain/errors";
import type { Tracing } from "../observability/tracing";

/** A request's span: its name, what it says of the request, and of what the request made. */
export interface RequestSpan<T> {
  name: string;
  attributes: Attributes;
  /** Ids and counts of what was made (never a body or a header). */
  made(result: T): Attributes;
}

/** Runs `make` (given the trace context its messages are to store) inside the request's span. */
export async function tracedRequest<T>(
  tracing: Tracing,
  c: Context,
  span: RequestSpan<T>,
  make: (traceparent: string | null) => Promise<T>,
): Promise<T> {
  if (!tracing.enabled) return make(null);
  const incoming = tracing.parse(c.req.header("traceparent"));
  const started = tracing.start(span.name, "producer", incoming, {
    "messaging.system": "dispatch",
    "messaging.operation.type": "send",
    "dispatch.project": c.get("project"),
    ...span.attributes,
  });
  if (started === null) return make(null);
  try {
    const result = await make(incoming ?? started.traceparent);
    started.set(span.made(result));
    started.end();
    return result;
  } catch (error) {
    // The status only: an error's text may quote the request (a destination URL with credentials in it).
    started.end(error instanceof AppError ? `status ${error.status}` : "internal error");
    throw error;
  }
}

/** A destination as a span may name it: a URL's origin and host (never its credentials, path or query), or a URL group's or API's name. */
export function destinationAttributes(destination: string): Attributes {
  if (!/^https?:\/\//i.test(destination)) return { "dispatch.destination": destination.slice(0, 200) };
  try {
    const url = new URL(destination);
    return { "server.address": url.hostname, "dispatch.destination": url.origin };
  } catch {
    return {};
  }
}

/** The message ids as a span names them: the id of one, the count of several. */
export function madeMessages(ids: string[]): Attributes {
  return ids.length === 1 ? { "messaging.message.id": ids[0]! } : { "dispatch.message_count": ids.length };
}
