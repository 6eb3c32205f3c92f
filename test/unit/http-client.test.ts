import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpClient, type HttpClientOptions } from "../../src/outbound/http-client";
import { DestinationGuard } from "../../src/outbound/destination-guard";
import { RefusedDestinationError } from "../../src/outbound/network-guard";

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

interface LocalServer {
  port: number;
  requests: Recorded[];
  connections: number;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: LocalServer[] = [];
const clients: HttpClient[] = [];

/** Starts a node:http server on a loopback address only, recording every request. */
async function startServer(handler: Handler, host: "127.0.0.1" | "::1" = "127.0.0.1"): Promise<LocalServer> {
  const requests: Recorded[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject).listen(0, host, () => resolve());
  });
  const local: LocalServer = {
    port: (server.address() as AddressInfo).port,
    requests,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connection", () => void local.connections++);
  servers.push(local);
  return local;
}

function client(options: Partial<HttpClientOptions> = {}): HttpClient {
  const created = new HttpClient({ guard: new DestinationGuard(true), maxResponseBytes: 1024 * 1024, ...options });
  clients.push(created);
  return created;
}

const get = (url: string, timeoutMs = 5000) => ({ url, method: "GET", headers: {}, body: null, timeoutMs });

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("HttpClient", () => {
  it("delivers a POST with method, headers and body intact and returns the response", async () => {
    const server = await startServer((_req, res) => {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.setHeader("x-single", "yes");
      res.writeHead(201, { "content-type": "text/plain" }).end("accepted");
    });
    const response = await client().send({
      url: `http://127.0.0.1:${server.port}/hooks/in?x=1`,
      method: "POST",
      headers: { "content-type": "application/json", "x-dispatch-id": "msg_123" },
      body: '{"hello":"world"}',
      timeoutMs: 5000,
    });

    expect(server.requests).toHaveLength(1);
    const [received] = server.requests;
    expect(received?.method).toBe("POST");
    expect(received?.url).toBe("/hooks/in?x=1");
    expect(received?.headers["content-type"]).toBe("application/json");
    expect(received?.headers["x-dispatch-id"]).toBe("msg_123");
    expect(received?.body.toString()).toBe('{"hello":"world"}');

    expect(response.status).toBe(201);
    expect(response.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(response.headers["x-single"]).toEqual(["yes"]);
    expect(response.headers["content-type"]).toEqual(["text/plain"]);
    expect(response.body.toString()).toBe("accepted");
    expect(response.truncated).toBe(false);
  });

  it("sends binary bodies and reuses keep-alive connections", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const http = client();
    const bytes = new Uint8Array([0, 1, 2, 254, 255]);
    for (let i = 0; i < 5; i++) {
      const response = await http.send({ ...get(`http://127.0.0.1:${server.port}/`), method: "PUT", body: bytes });
      expect(response.status).toBe(200);
    }
    expect(server.requests.map((r) => r.method)).toEqual(Array(5).fill("PUT"));
    expect(server.requests.every((r) => r.body.equals(Buffer.from(bytes)))).toBe(true);
    // undici hands a socket back to the pool a tick after the body ends, so
    // back-to-back sends may open a second connection, but never one per request.
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it("honours the connections limit", async () => {
    const server = await startServer((_req, res) => res.end("ok"));
    const http = client({ connections: 1 });
    await Promise.all(Array.from({ length: 4 }, () => http.send(get(`http://127.0.0.1:${server.port}/`))));
    expect(server.requests).toHaveLength(4);
    expect(server.connections).toBe(1);
  });

  it("returns a redirect as-is without following it", async () => {
    const target = await startServer((_req, res) => res.end("should not be reached"));
    const origin = await startServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` }).end();
    });
    const response = await client().send(get(`http://127.0.0.1:${origin.port}/start`));

    expect(response.status).toBe(302);
    expect(response.headers.location).toEqual([`http://127.0.0.1:${target.port}/elsewhere`]);
    expect(origin.requests).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it("caps the response body at maxResponseBytes and flags truncation", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 64; i++) res.write(Buffer.alloc(16 * 1024, 0x61));
      res.end();
    });
    const response = await client({ maxResponseBytes: 1000 }).send(get(`http://127.0.0.1:${server.port}/big`));

    expect(response.status).toBe(200);
    expect(response.body.length).toBe(1000);
    expect(response.body.every((byte) => byte === 0x61)).toBe(true);
    expect(response.truncated).toBe(true);
  });

  it("does not flag a body of exactly maxResponseBytes as truncated", async () => {
    const server = await startServer((_req, res) => res.end(Buffer.alloc(1000, 0x62)));
    const response = await client({ maxResponseBytes: 1000 }).send(get(`http://127.0.0.1:${server.port}/`));

    expect(response.body.length).toBe(1000);
    expect(response.truncated).toBe(false);
  });

  it("times out when the server does not answer", async () => {
    const server = await startServer(() => {});
    const started = Date.now();
    await expect(client().send(get(`http://127.0.0.1:${server.port}/slow`, 200))).rejects.toThrow(
      /timed out after 200 ms/,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("times out when the body stalls after the headers", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200);
      res.write("partial");
    });
    await expect(client().send(get(`http://127.0.0.1:${server.port}/stall`, 200))).rejects.toThrow(
      /timed out after 200 ms/,
    );
  });

  it("reads a body that arrives in many chunks, whole", async () => {
    const server = await startServer((_req, res) => {
      let sent = 0;
      const next = () => (sent++ < 20 ? res.write(Buffer.alloc(4096, 0x61 + (sent % 26)), () => setImmediate(next)) : res.end());
      next();
    });
    const response = await client().send(get(`http://127.0.0.1:${server.port}/chunks`));

    expect(response.truncated).toBe(false);
    expect(response.body).toEqual(Buffer.concat(Array.from({ length: 20 }, (_, i) => Buffer.alloc(4096, 0x61 + ((i + 1) % 26)))));
  });

  it("abortInFlight ends the requests in flight with its reason; later requests go through", async () => {
    const server = await startServer((req, res) => {
      if (req.url === "/stall-body") {
        res.writeHead(200);
        res.write("partial");
      } else if (req.url === "/ok") {
        res.end("fine");
      }
      // "/stall-headers" is never answered.
    });
    const http = client();
    const base = `http://127.0.0.1:${server.port}`;
    const stalled = [http.send(get(`${base}/stall-headers`, 60_000)), http.send(get(`${base}/stall-body`, 60_000))];
    const settled = Promise.allSettled(stalled);
    while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    http.abortInFlight(new Error("stopping"));

    for (const result of await settled) {
      expect(result.status).toBe("rejected");
      expect(((result as PromiseRejectedResult).reason as Error).message).toBe("stopping");
    }
    const after = await http.send(get(`${base}/ok`));
    expect(after.status).toBe(200);
    expect(after.body.toString()).toBe("fine");
  });

  describe("with the guard on", () => {
    const guarded = () => client({ guard: new DestinationGuard(false) });

    async function expectRefused(http: HttpClient, url: string): Promise<RefusedDestinationError> {
      const error = await http.send(get(url)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(RefusedDestinationError);
      return error as RefusedDestinationError;
    }

    it("refuses an IPv4 loopback literal before connecting", async () => {
      const server = await startServer((_req, res) => res.end("leak"));
      const error = await expectRefused(guarded(), `http://127.0.0.1:${server.port}/`);

      expect(error.address).toBe("127.0.0.1");
      expect(error.message).toContain("DISPATCH_ALLOW_PRIVATE_NETWORKS=true");
      expect(server.requests).toHaveLength(0);
      expect(server.connections).toBe(0);
    });

    it("refuses an IPv6 loopback literal before connecting", async () => {
      // The refusal needs no listener; one on ::1 (where the machine has IPv6) proves nothing arrives.
      const server = await startServer((_req, res) => res.end("leak"), "::1").catch(() => undefined);
      const error = await expectRefused(guarded(), `http://[::1]:${server?.port ?? 9}/`);

      expect(error.address).toBe("::1");
      expect(server?.requests ?? []).toHaveLength(0);
      expect(server?.connections ?? 0).toBe(0);
    });

    it("refuses a host name that resolves to loopback", async () => {
      const server = await startServer((_req, res) => res.end("leak"));
      const error = await expectRefused(guarded(), `http://localhost:${server.port}/`);

      expect(error.host).toBe("localhost");
      expect(["127.0.0.1", "::1"]).toContain(error.address);
      expect(server.requests).toHaveLength(0);
      expect(server.connections).toBe(0);
    });

    it("tells the guard's listener the address it refused, which the error's message leaves out", async () => {
      const server = await startServer((_req, res) => res.end("leak"));
      const heard: [string, string][] = [];
      const http = client({ guard: new DestinationGuard(false, (host, address) => heard.push([host, address])) });
      const error = await expectRefused(http, `http://localhost:${server.port}/`);

      expect(heard).toEqual([["localhost", error.address]]);
      expect(error.message).not.toContain(error.address);
    });

    it("lets through the service's own /echo on loopback, and nothing else at that origin", async () => {
      const server = await startServer((req, res) => res.end(`got ${req.url}`));
      const guard = new DestinationGuard(false);
      guard.allowOwnEcho(server.port, null);
      const http = client({ guard });

      for (const url of [`http://127.0.0.1:${server.port}/echo`, `HTTP://127.0.0.1:${server.port}/echo?x=1`]) {
        const response = await http.send(get(url));
        expect(response.body.toString()).toBe(`got /echo${url.endsWith("?x=1") ? "?x=1" : ""}`);
      }
      for (const path of ["/v2/publish/x", "/echo/../v2/keys", "/echoes", "/echo%2F..%2Fv2"]) {
        await expectRefused(http, `http://127.0.0.1:${server.port}${path}`);
      }
      await expectRefused(http, `http://127.0.0.1:${server.port + 1 > 65535 ? 1 : server.port + 1}/echo`);
      expect(server.requests.map((request) => request.url)).toEqual(["/echo", "/echo?x=1"]);
    });

    it("keeps refusing on repeated attempts", async () => {
      const server = await startServer((_req, res) => res.end("leak"));
      const http = guarded();
      for (let i = 0; i < 3; i++) await expectRefused(http, `http://127.0.0.1:${server.port}/`);
      expect(server.connections).toBe(0);
    });
  });
});
