/**
 * `POST /echo` (and any other method): a destination of Dispatch's own, for
 * a first message on a machine without internet. It answers 200 and logs one
 * line naming the message that arrived (its id and size, never its body), so
 * the person who just ran `npm start` sees the delivery where they look. It is
 * mounted only with the embedded development database, whose destinations may
 * be on loopback; a service on a configured database has no such route.
 */
import { Hono } from "hono";
import * as v from "valibot";
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
});

/** The echo route, logging through `deps.log`. */
export function echoRoutes(deps: Pick<AppDeps, "log">) {
  return new Hono().all("/", ECHO.describe, async (c) => {
    const body = await c.req.arrayBuffer();
    const messageId = c.req.header("svc-message-id") ?? c.req.header("upstash-message-id") ?? null;
    deps.log(`echo: ${messageId ? `message ${messageId}` : "a request"} arrived (${c.req.method}, ${body.byteLength} bytes)`, {
      level: "info",
      ...(messageId ? { messageId } : {}),
    });
    return c.json({ received: body.byteLength, messageId });
  });
}
