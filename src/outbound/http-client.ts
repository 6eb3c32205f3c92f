import { lookup as dnsLookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector, request, type Dispatcher } from "undici";
import type { DestinationGuard } from "./destination-guard";
import { isInternalAddress, RefusedDestinationError } from "./network-guard";

/** Construction options for {@link HttpClient}. */
export interface HttpClientOptions {
  /** The SSRF guard: unless it allows private networks, destinations that are not public are refused before connecting. */
  guard: DestinationGuard;
  /** Response bodies are cut off (and `truncated` set) after this many bytes. */
  maxResponseBytes: number;
  /** Maximum keep-alive connections per origin; unlimited when omitted. */
  connections?: number;
}

/** One outbound HTTP attempt. */
export interface OutboundRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | string | null;
  /**
   * How long the attempt may wait for the response headers, and during any
   * pause in the response body: undici's own timers, so an attempt allocates
   * no timer or signal of its own (the body is capped, so a trickle cannot go
   * on forever). Connecting is bounded by undici's connect timeout, 10 s.
   */
  timeoutMs: number;
}

/** The destination's answer; redirects are returned as-is, never followed. */
export interface OutboundResponse {
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
  truncated: boolean;
}

type ResponseBody = Dispatcher.ResponseData["body"];

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** A DNS lookup that fails with RefusedDestinationError if any resolved address is not public. */
function guardedLookup(guard: DestinationGuard): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      const refused = addresses.find((entry) => isInternalAddress(entry.address));
      if (refused) return callback(guard.refuse(hostname, refused.address), "");
      const [first] = addresses;
      if (options.all || !first) return callback(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

/** A connector that checks IP literals, resolved names and the connected peer address against the guard. */
function guardedConnector(guard: DestinationGuard): buildConnector.connector {
  const base = buildConnector({ lookup: guardedLookup(guard) });
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) !== 0 && isInternalAddress(host)) {
      const refused = guard.refuse(host, host);
      queueMicrotask(() => callback(refused, null));
      return;
    }
    base(options, (err, socket) => {
      if (err) return callback(err, null);
      const remote = socket.remoteAddress ?? "unknown";
      if (!isInternalAddress(remote)) return callback(null, socket);
      socket.destroy();
      callback(guard.refuse(host, remote), null);
    });
  };
}

function toHeaderArrays(headers: Dispatcher.ResponseData["headers"]): Record<string, string[]> {
  const arrays: Record<string, string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) arrays[name] = Array.isArray(value) ? value : [value];
  }
  return arrays;
}

/**
 * The body, cut off after `limit` bytes (the rest is not read). Read through
 * the stream's events: an async iterator costs a promise per chunk and more
 * (measured: with the signal below, 15 µs of CPU per attempt, bench/READING.md).
 */
function readCapped(body: ResponseBody, limit: number): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      if (size + chunk.length <= limit) {
        chunks.push(chunk);
        size += chunk.length;
        return;
      }
      chunks.push(chunk.subarray(0, limit - size));
      body.off("data", onData).off("end", onEnd).on("error", () => {}).destroy();
      resolve({ body: Buffer.concat(chunks, limit), truncated: true });
    };
    const onEnd = () => resolve({ body: Buffer.concat(chunks, size), truncated: false });
    body.on("data", onData).once("end", onEnd).once("error", reject);
  });
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && TIMEOUT_CODES.has(code);
}

/**
 * The single outbound HTTP client: one keep-alive undici Agent, no redirect
 * following, capped response bodies, an attempt timeout and (unless
 * private networks are allowed) an SSRF guard on every new connection. The
 * service's own `/echo` goes through a second, unguarded Agent that carries
 * nothing else.
 */
export class HttpClient {
  private agent: Agent;
  private echoAgent: Agent;

  /** Creates the client and its connection pools. */
  constructor(private readonly options: HttpClientOptions) {
    this.agent = this.newAgent();
    this.echoAgent = new Agent();
  }

  /** Where response bodies are cut off. */
  get maxResponseBytes(): number {
    return this.options.maxResponseBytes;
  }

  /**
   * Performs one attempt. Resolves with any HTTP status (3xx included); rejects
   * with RefusedDestinationError, a "timed out after N ms" Error, the network
   * error, or the reason given to `abortInFlight`.
   */
  async send(req: OutboundRequest): Promise<OutboundResponse> {
    try {
      const res = await request(req.url, {
        dispatcher: this.options.guard.isOwnEcho(req.url) ? this.echoAgent : this.agent,
        method: req.method as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body ?? undefined,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      const { body, truncated } = await readCapped(res.body, this.options.maxResponseBytes);
      return { status: res.statusCode, headers: toHeaderArrays(res.headers), body, truncated };
    } catch (err) {
      if (err instanceof RefusedDestinationError || !isTimeout(err)) throw err;
      throw new Error(`request timed out after ${req.timeoutMs} ms`, { cause: err });
    }
  }

  /**
   * Ends every request in flight at once, rejecting each with `reason` (a
   * shutdown's grace ran out); requests sent later use new connections. Not
   * an AbortSignal per request: undici adds and removes a listener on it for
   * every request, which cost 9 µs of CPU per attempt (bench/READING.md).
   */
  abortInFlight(reason: Error): void {
    const aborted = [this.agent, this.echoAgent];
    this.agent = this.newAgent();
    this.echoAgent = new Agent();
    for (const agent of aborted) void agent.destroy(reason).catch(() => {});
  }

  /** Closes pooled connections after in-flight requests finish. */
  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.echoAgent.close()]);
  }

  private newAgent(): Agent {
    const { connections, guard } = this.options;
    return new Agent({ connections: connections ?? null, connect: guard.allowPrivateNetworks ? undefined : guardedConnector(guard) });
  }
}
