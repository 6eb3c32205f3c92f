/**
 * The official SDKs' development mode, served by Dispatch
 * (DISPATCH_QSTASH_DEV). `@upstash/qstash` (2.11 on) and `@upstash/workflow`
 * (1.3 on) read `QSTASH_DEV=true` as "a development server on
 * 127.0.0.1:QSTASH_DEV_PORT (8080) with a fixed token and fixed signing
 * keys": the client ignores `QSTASH_URL` and `QSTASH_TOKEN`, the Receiver
 * ignores the signing keys, and before starting a server of its own the
 * client asks `GET /v2/keys` with that token whether one with those keys is
 * already there. A Dispatch started with exactly those credentials is that
 * server, and its data (the embedded database) outlives a restart.
 *
 * The credentials are public (they are in every copy of the SDK), so dev
 * mode is refused anywhere but the embedded database behind a loopback
 * listener: nobody else can reach it, and nothing it keeps matters beyond
 * this machine.
 */

/** The settings dev mode checks and sets (of config.ts's Config). */
export interface DevSettings {
  databaseUrl: string | null;
  host: string | null;
  tokens: string[];
  currentSigningKey: string | null;
  nextSigningKey: string | null;
  defaultDialect: "svc" | "upstash";
  allowPrivateNetworks: boolean;
}

/** The SDKs' development credentials (src/dev-server/constants.ts in @upstash/qstash). */
export const QSTASH_DEV_CREDENTIALS = {
  token: "eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=",
  currentSigningKey: "sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r",
  nextSigningKey: "sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs",
} as const;

/** Why `config` cannot run in dev mode (settings it would override, or a reachable service); empty when it can. */
export function qstashDevProblems(config: DevSettings): string[] {
  const problems: string[] = [];
  const why = "DISPATCH_QSTASH_DEV uses the SDKs' public development credentials";
  if (config.databaseUrl !== null) problems.push(`${why}, so it runs on the embedded database only: unset DATABASE_URL`);
  if (config.host !== null && !isLoopback(config.host)) {
    problems.push(`${why}, so it listens on loopback only: unset HOST or set it to 127.0.0.1 (got ${config.host})`);
  }
  if (config.tokens.length > 0) problems.push(`${why} as its token: unset DISPATCH_TOKEN`);
  if (config.currentSigningKey !== null) {
    problems.push(`${why} as its signing keys: unset DISPATCH_CURRENT_SIGNING_KEY and DISPATCH_NEXT_SIGNING_KEY`);
  }
  return problems;
}

/**
 * `config` as the SDKs' development server: their token and signing keys,
 * the compat dialect for a publish that names none (every delivery carries
 * the `Upstash-Signature` their Receiver verifies), and the app on this
 * machine reachable as a destination.
 */
export function asQstashDev<C extends DevSettings>(config: C): C {
  return {
    ...config,
    tokens: [QSTASH_DEV_CREDENTIALS.token],
    currentSigningKey: QSTASH_DEV_CREDENTIALS.currentSigningKey,
    nextSigningKey: QSTASH_DEV_CREDENTIALS.nextSigningKey,
    defaultDialect: "upstash",
    allowPrivateNetworks: true,
  };
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
