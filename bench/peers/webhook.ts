/**
 * What the peers (bench/peers/pg-boss.ts, graphile-worker.ts) share with the
 * minimal pipeline and with each other, so that only their queue library
 * differs: the publish server (node:http, `POST /v2/publish/<destination
 * URL>` with the Bearer token, the body kept as the publisher sent it) and
 * the delivery (undici, 64 connections, the HS256 signature of
 * bench/signature.ts, the message's id in `svc-message-id`).
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { readPublish } from "../publish-request";
import { sign } from "../signature";

/** Requests in flight to receivers at most, as the pipeline's. */
export const IN_FLIGHT = 64;

/** A message as the peers store it: where it goes and its body, unchanged. */
export interface Delivery {
  url: string;
  body: string;
}

const signingKey = randomBytes(32);
const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 30_000, headersTimeout: 30_000, bodyTimeout: 30_000 });

/**
 * Serves publishes on HOST:PORT (the environment's, as the pipeline's):
 * each is handed to `store`, and answered 201 with the id it returns once it
 * resolves (500 if it throws). Prints `URL: <base>` once listening, after `banner`.
 */
export function servePublishes(banner: string, store: (message: Delivery) => Promise<string>): Server {
  const server = createServer((req, res) => publish(req, res, store));
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    console.log(`${banner}\nURL: http://127.0.0.1:${port}`);
  });
  return server;
}

function publish(req: IncomingMessage, res: ServerResponse, store: (message: Delivery) => Promise<string>): void {
  readPublish(req, res, ({ url, body, answer }) =>
    store({ url, body: body.toString("utf8") }).then(answer, (error: Error) => {
      console.error(`publish failed: ${error.message}`);
      answer(null);
    }),
  );
}

/** POSTs `message` as message `id`, signed; resolves whether the receiver answered 2xx. */
export async function post(message: Delivery, id: string): Promise<boolean> {
  const body = Buffer.from(message.body, "utf8");
  try {
    const response = await request(message.url, {
      method: "POST",
      headers: { "content-type": "application/json", "svc-message-id": id, "svc-signature": sign(signingKey, message.url, body) },
      body,
      dispatcher: agent,
    });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300;
  } catch {
    return false;
  }
}

/** Runs `stop` on SIGTERM (the bench's stop), then exits. */
export function onStop(server: Server, stop: () => Promise<void>): void {
  process.once("SIGTERM", () => {
    server.close();
    stop().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(`stop failed: ${error.message}`);
        process.exit(1);
      },
    );
  });
}
