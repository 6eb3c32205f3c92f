/**
 * `POST /echo` (and any other method): a destination of Dispatch's own, for
 * a first message on a machine without internet. It answers 200 and logs one
 * line naming the message that arrived (its id and size, never its body), so
 * the person who just ran `npm start` sees the delivery where they look. It is
 * mounted only with the embedded development database, whose destinations may
 * be on loopback; a service on a configured database has no such route. It
 * takes no token, so it counts the body as it streams in, keeping none of it,
 * and refuses one over the maximum message size (413) without reading the rest.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { tooLarge } from "../../domain/errors";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";

const ECHO = operation({
  summary: "Echo (development)",
  description:
    "A destination for trying Dispatch without internet: answers 200 and logs the id of the message that arrived. " +
    "Only with the embedded development database.",
  tag: "Operations",
  access: "public",
  database: false,
  body: { bytes: "Anything." },
  responses: { 200: { description: "Received.", json: v.object({ received: v.number(), messageId: v.nullable(v.string()) }) } },
  errors: [413],
});

/** The echo route, logging through `deps.log`. */
export function echoRoutes(deps: Pick<AppDeps, "log"> & { config: Pick<AppDeps["config"], "maxMessageBytes"> }) {
  return new Hono().all("/", ECHO.describe, async (c) => {
    const received = await countBody(c.req.raw.body, deps.config.maxMessageBytes);
    const messageId = c.req.header("svc-message-id") ?? c.req.header("upstash-message-id") ?? null;
    deps.log(`echo: ${messageId ? `message ${messageId}` : "a request"} arrived (${c.req.method}, ${received} bytes)`, {
      level: "info",
      ...(messageId ? { messageId } : {}),
    });
    return c.json({ received, messageId });
  });
}

/** The body's length, read as it streams and kept nowhere; a 413 (the rest unread) past `maxBytes`. */
async function countBody(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<number> {
  if (body === null) return 0;
  const reader = body.getReader();
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return received;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel();
      throw tooLarge("the echo body", maxBytes);
    }
  }
}
