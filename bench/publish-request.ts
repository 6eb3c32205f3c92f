/**
 * The publish request of the minimal pipeline (bench/pipeline.ts) and the
 * peers (bench/peers/webhook.ts): `POST /v2/publish/<destination URL>` with
 * the Bearer token of DISPATCH_TOKEN, the body taken as sent, answered 201
 * with the stored message's id (500 when it was not stored).
 */
import type { IncomingMessage, ServerResponse } from "node:http";

const PUBLISH_PREFIX = "/v2/publish/";
const token = process.env.DISPATCH_TOKEN ?? "";

/** A publish read off its request, and how to answer it once stored. */
export interface PublishRequest {
  url: string;
  body: Buffer;
  /** Answers 201 with the message's id, or 500 when `id` is null (not stored). */
  answer(id: string | null): void;
}

/** Reads a publish (404 for another route, 401 without the token) and hands it to `take`. */
export function readPublish(req: IncomingMessage, res: ServerResponse, take: (publish: PublishRequest) => void): void {
  const reply = (status: number, body: object) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  const path = req.url ?? "";
  if (req.method !== "POST" || !path.startsWith(PUBLISH_PREFIX)) return reply(404, { error: "not found" });
  if (req.headers.authorization !== `Bearer ${token}`) return reply(401, { error: "unauthorized" });
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () =>
    take({
      url: decodeURIComponent(path.slice(PUBLISH_PREFIX.length)),
      body: Buffer.concat(chunks),
      answer: (id) => (id === null ? reply(500, { error: "not stored" }) : reply(201, { messageId: id })),
    }),
  );
}
