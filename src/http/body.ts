/**
 * Request bodies, read once and bounded. Reading the Node request stream
 * directly keeps the publish path off Web Streams and Request copies (the
 * busiest cost in a profile of the publish path with hono's body-limit).
 */
import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../domain/errors";

const BODY = "body" as never;

/** Reads every request's body (at most `maxBytes`, else a 413) before the route runs. */
export function readBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = Number(c.req.header("content-length"));
    if (declared > maxBytes) return tooLarge(c, maxBytes);
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const body = incoming ? await readStream(incoming, maxBytes) : Buffer.from(await c.req.arrayBuffer());
    if (body === null || body.length > maxBytes) return tooLarge(c, maxBytes);
    c.set(BODY, body as never);
    await next();
  };
}

/** The request body as bytes; a 413 above `maxBytes` when given. */
export function bodyOf(c: Context, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const body = (c.get(BODY) as Buffer | undefined) ?? Buffer.alloc(0);
  if (body.length > maxBytes) throw new AppError(413, tooLargeMessage(maxBytes));
  return body;
}

/** The request body as text. */
export const textOf = (c: Context) => bodyOf(c).toString("utf8");

/** The request body parsed as JSON, or null when it is not JSON. */
export function jsonOf(c: Context): unknown {
  try {
    return JSON.parse(textOf(c));
  } catch {
    return null;
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

const tooLargeMessage = (maxBytes: number) => `request body exceeds the maximum message size of ${maxBytes} bytes`;

function tooLarge(c: Context, maxBytes: number) {
  // The rest of the body is left unread, so the connection cannot be reused.
  c.header("Connection", "close");
  return c.json({ error: tooLargeMessage(maxBytes) }, 413);
}
