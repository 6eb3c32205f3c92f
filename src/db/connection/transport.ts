/**
 * Plain text or TLS, decided once per server before any driver connects, so
 * that both drivers use the same transport with the same checks (libpq's
 * `sslmode`, settings.ts):
 *
 * - `disable`: plain. `allow`: plain when the server takes it, else TLS.
 *   `prefer` (the default): TLS when the server offers it, else plain. All
 *   three leave the certificate unchecked, as libpq does.
 * - `require`: TLS, the certificate unchecked, unless `sslrootcert` names a
 *   file: then its chain is checked as with `verify-ca` (libpq's rule).
 * - `verify-ca`: the chain must lead to a trusted CA. `verify-full`: that and
 *   the host name. Trusted CAs are those of `sslrootcert`, or, without it (or
 *   with `sslrootcert=system`), those Node trusts (its bundled public CAs and
 *   NODE_EXTRA_CA_CERTS); libpq would look for `~/.postgresql/root.crt`.
 *
 * Whether a server offers TLS, or takes a plain session, is asked with the
 * protocol's first message (an SSLRequest, or a start-up packet that is
 * answered before any password), so a mode that cannot work is one clear
 * message before anything is written.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import type { ConnectionOptions } from "node:tls";
import { DatabaseStartError } from "./errors";
import { type ConnectionSettings, describeServer, type SslSettings } from "./settings";

/**
 * How connections to one server are made. `prefer` leaves the choice to
 * postgres.js at each connection (libpq's `prefer`, asked again each time):
 * only for URLs handed to `createSql` as they are (tests, the bench), never
 * to node-postgres, which cannot fall back to plain text.
 */
export type Transport = { tls: false } | { tls: true; options: ConnectionOptions } | { tls: "prefer" };

/** A server and how to reach it: what the drivers are given (drivers.ts). */
export interface Endpoint {
  settings: ConnectionSettings;
  transport: Transport;
}

const PLAIN: Transport = { tls: false };

/**
 * `settings` with the transport decided without asking the server: what
 * `resolveEndpoint` decides, except that `allow` and `prefer` leave it to
 * postgres.js (see Transport).
 */
export function unresolvedEndpoint(settings: ConnectionSettings): Endpoint {
  const { mode } = settings.ssl;
  if (settings.socket || mode === "disable") return { settings, transport: PLAIN };
  return { settings, transport: mode === "allow" || mode === "prefer" ? { tls: "prefer" } : tlsTransport(settings) };
}

/** Decides the transport to `settings`' server, asking the server where the mode depends on it. */
export async function resolveEndpoint(settings: ConnectionSettings): Promise<Endpoint> {
  return { settings, transport: await resolveTransport(settings) };
}

async function resolveTransport(settings: ConnectionSettings): Promise<Transport> {
  const { mode } = settings.ssl;
  // libpq never uses TLS over a Unix socket, whatever the mode.
  if (settings.socket || mode === "disable") return PLAIN;
  if (mode === "allow") return (await takesPlainSessions(settings)) ? PLAIN : tlsTransport(settings);
  const offersTls = await offersTlsOn(settings);
  if (mode === "prefer") return offersTls ? tlsTransport(settings) : PLAIN;
  if (!offersTls) {
    throw new DatabaseStartError(
      `${settings.source} asks for TLS (sslmode=${mode}) but the server at ${describeServer(settings)} does not offer it`,
    );
  }
  return tlsTransport(settings);
}

/**
 * The TLS options of `settings`, for the transport decided above; the modes
 * below `require` (a server that took TLS under `allow` or `prefer`) check nothing.
 */
export function tlsTransport(settings: ConnectionSettings): Transport {
  const { ssl, source } = settings;
  const verify = ssl.mode === "verify-full" || ssl.mode === "verify-ca" || (ssl.mode === "require" && ssl.rootCert !== null);
  const options: ConnectionOptions = { ...clientCertificate(ssl, source), rejectUnauthorized: verify };
  if (verify && ssl.rootCert !== null && ssl.rootCert !== "system") options.ca = readPem(ssl.rootCert, "sslrootcert", source);
  // The chain is checked, the name is not: verify-ca (and require with a root certificate).
  if (verify && ssl.mode !== "verify-full") options.checkServerIdentity = () => undefined;
  return { tls: true, options };
}

function clientCertificate(ssl: SslSettings, source: string): ConnectionOptions {
  if (ssl.cert === null || ssl.key === null) return {};
  return {
    cert: readPem(ssl.cert, "sslcert", source),
    key: readPem(ssl.key, "sslkey", source),
    ...(ssl.password !== null ? { passphrase: ssl.password } : {}),
  };
}

function readPem(path: string, parameter: string, source: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new DatabaseStartError(`${source} ${parameter}=${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
}

/** An SSLRequest (protocol §55.2.10): length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

/** Whether the server answers an SSLRequest with "S". */
async function offersTlsOn(settings: ConnectionSettings): Promise<boolean> {
  const answer = await firstByte(settings, SSL_REQUEST);
  return answer === "S";
}

/**
 * Whether the server starts a plain session: a start-up packet is answered by
 * an authentication request ("R") when pg_hba.conf lets it in without TLS,
 * and by an error ("E") when it does not. No password is sent.
 */
async function takesPlainSessions(settings: ConnectionSettings): Promise<boolean> {
  const fields = ["user", settings.user, "database", settings.database, ""];
  const body = Buffer.concat([Buffer.from([0, 3, 0, 0]), ...fields.map((field) => Buffer.from(`${field}\0`, "utf8"))]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length + 4);
  return (await firstByte(settings, Buffer.concat([length, body]))) === "R";
}

/** Sends `message` on a new connection to the server and resolves with the first byte of its answer. */
function firstByte(settings: ConnectionSettings, message: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: settings.host, port: settings.port });
    const fail = (reason: string) => {
      socket.destroy();
      reject(new DatabaseStartError(`${settings.source}: cannot reach ${describeServer(settings)} (${reason})`));
    };
    socket.setTimeout(settings.connectTimeoutSeconds * 1000, () => fail(`no answer within ${settings.connectTimeoutSeconds} s`));
    socket.once("error", (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
    socket.once("connect", () => socket.write(message));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(String.fromCharCode(data[0]!));
    });
  });
}
