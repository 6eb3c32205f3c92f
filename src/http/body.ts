/**
 * Request bodies, read once and bounded. Reading the Node request stream
 * directly keeps the publish path off Web Streams and Request copies (the
 * busiest cost in a profile of the publish path with hono's body-limit).
 */
import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { badRequest, tooLarge, tooLargeText } from "../domain/errors";
import { checkJsonText, checkText, type JsonPath } from "../domain/storable-text";
import { requestParts } from "./request";

/** Refuses bytes that are not UTF-8 instead of replacing them; a byte order mark is kept, as `Buffer` keeps it. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Reads every request's body (at most `maxBytes`, else a 413) before the route runs. */
export function readBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = Number(requestParts(c).headers["content-length"]);
    if (declared > maxBytes) return refuse(c, maxBytes);
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const body = incoming ? await readStream(incoming, maxBytes) : Buffer.from(await c.req.arrayBuffer());
    if (body === null || body.length > maxBytes) return refuse(c, maxBytes);
    c.set("body", body);
    await next();
  };
}

/** The request body as bytes; a 413 above `maxBytes` when given. */
export function bodyOf(c: Context, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const body = c.get("body") ?? Buffer.alloc(0);
  if (body.length > maxBytes) throw tooLarge("the request body", maxBytes);
  return body;
}

/**
 * The request body as text (e.g. a run's result, kept as text): UTF-8
 * Postgres can store (`checkText`), else a 400; a 413 above `maxBytes`.
 */
export const textOf = (c: Context, maxBytes?: number) => checkText(utf8Of(c, maxBytes), "the body");

/**
 * The request body parsed as JSON, or null when it is not JSON. Every route
 * that parses JSON reads it here: its strings become rows or query
 * parameters, so each one, keys included, must be text Postgres can store
 * (`checkJsonText`), else a 400 naming the field. `isBytes` marks the fields
 * that are message bodies (stored as bytes): they may hold anything.
 */
export function jsonOf(c: Context, isBytes?: (path: JsonPath) => boolean): unknown {
  const text = utf8Of(c);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  checkJsonText(json, isBytes);
  return json;
}

function utf8Of(c: Context, maxBytes?: number): string {
  const body = bodyOf(c, maxBytes);
  try {
    return UTF8.decode(body);
  } catch {
    throw badRequest("the body must be UTF-8 text");
  }
}

function readStream(stream: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stream.removeAllListeners("data");
        stream.pause();
        resolve(null);
      } else chunks.push(chunk);
    });
    stream.once("end", () => resolve(Buffer.concat(chunks, size)));
    stream.once("error", reject);
  });
}

function refuse(c: Context, maxBytes: number) {
  // The rest of the body is left unread, so the connection cannot be reused.
  c.header("Connection", "close");
  return c.json({ error: tooLargeText("the request body", maxBytes) }, 413);
}
