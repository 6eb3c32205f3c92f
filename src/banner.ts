/**
 * What a person reads once Dispatch runs: the banner `dispatch start` prints,
 * and the lines `dispatch env` prints. Both give the variables the official
 * SDKs read (`QSTASH_URL`, `QSTASH_TOKEN`, `QSTASH_CURRENT_SIGNING_KEY`,
 * `QSTASH_NEXT_SIGNING_KEY`: @upstash/qstash, @upstash/workflow, qstash-py,
 * qstash-go), ready to paste into a `.env` file, beside Dispatch's own names.
 * Secrets Dispatch generated are shown by the banner only on the start that
 * made them and only to a terminal, so that a newcomer can start while logs
 * keep none; `dispatch env` prints them on demand. Configured ones are the
 * operator's and only named.
 */
import type { Config } from "./config/config";
import { dialectSummary } from "./domain/delivery/dialect-summary";
import type { SigningKeys } from "./domain/delivery/signing";

/** What the SDK variables are made of. */
export interface SdkSettings {
  url: string;
  token: string;
  signingKeys: SigningKeys;
}

/** The four lines the official SDKs read, in `.env` form. */
export function sdkEnvironment(settings: SdkSettings): string[] {
  return [
    `QSTASH_URL=${settings.url}`,
    `QSTASH_TOKEN=${settings.token}`,
    `QSTASH_CURRENT_SIGNING_KEY=${settings.signingKeys.current}`,
    `QSTASH_NEXT_SIGNING_KEY=${settings.signingKeys.next}`,
  ];
}

/**
 * The base URL clients reach the API at, for commands that run no server:
 * DISPATCH_BASE_URL, else HOST (127.0.0.1 when unset with the embedded
 * database, where `start` listens; localhost for a wildcard) on PORT.
 */
export function configuredBaseUrl(config: Config): string {
  if (config.baseUrl !== null) return config.baseUrl;
  const wildcard = config.host === "0.0.0.0" || config.host === "::";
  const host = config.host === null ? (config.databaseUrl === null ? "127.0.0.1" : "localhost") : wildcard ? "localhost" : config.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
}

/** What the banner shows of a started service. */
export interface StartedService {
  role: string;
  baseUrl: string | null;
  embedded: boolean;
  tokens: string[];
  signingKeys: SigningKeys;
  /** Whether this start generated the token or the signing keys. */
  madeSecrets: boolean;
}

/** Said where a generated secret is not shown. */
const RUN_ENV = "(not shown: npx dispatch env prints it)";

/**
 * Whether the banner shows generated secrets: only on the start that made
 * them, and only to a terminal (a container's or a supervisor's log keeps
 * what it is given; `dispatch env` prints them on demand).
 */
export function showsSecrets(service: Pick<StartedService, "madeSecrets">, terminal: boolean): boolean {
  return service.madeSecrets && terminal;
}

/** The banner, its lines joined; generated secrets appear only when `showSecrets` (see `showsSecrets`). */
export function banner(service: StartedService, config: Config, showSecrets: boolean): string {
  if (config.qstashDev) return devBanner(service, config);
  const tokenConfigured = config.tokens.length > 0;
  const keysConfigured = config.currentSigningKey !== null;
  const token = tokenConfigured ? "(DISPATCH_TOKEN)" : showSecrets ? service.tokens[0]! : RUN_ENV;
  const keys = keysConfigured
    ? { current: "(DISPATCH_CURRENT_SIGNING_KEY)", next: "(DISPATCH_NEXT_SIGNING_KEY)" }
    : showSecrets
      ? service.signingKeys
      : { current: RUN_ENV, next: RUN_ENV };
  const lines = [
    `Dispatch is running (role: ${service.role}${service.embedded ? ", embedded Postgres" : ""}).`,
    ...(service.baseUrl
      ? [
          `  URL:                 ${service.baseUrl}`,
          `  Dashboard:           ${service.baseUrl}/dashboard (sign in with the token)`,
          `  API reference:       ${service.baseUrl}/docs`,
        ]
      : []),
    `  Token:               ${token}`,
    `  Current signing key: ${keys.current}`,
    `  Next signing key:    ${keys.next}`,
    dialectLine(config),
    ...(config.allowPrivateNetworks
      ? ["  SSRF guard:          off (DISPATCH_ALLOW_PRIVATE_NETWORKS=true: destinations on this machine and private networks are reached)"]
      : []),
  ];
  if (service.baseUrl === null) return lines.join("\n");
  const shown = showSecrets || (tokenConfigured && keysConfigured);
  const sdk = shown
    ? sdkEnvironment({
        url: service.baseUrl,
        token: tokenConfigured ? "<your DISPATCH_TOKEN>" : token,
        signingKeys: keysConfigured ? { current: "<your DISPATCH_CURRENT_SIGNING_KEY>", next: "<your DISPATCH_NEXT_SIGNING_KEY>" } : keys,
      }).map((line) => `  ${line}`)
    : [`  QSTASH_URL=${service.baseUrl}`, "  and the token and signing keys: npx dispatch env prints all four"];
  // The embedded development database has a destination of its own (/echo): the first message needs no internet.
  const destination = service.embedded ? `${service.baseUrl}/echo` : "https://example.com/hook";
  const bearer = tokenConfigured ? "$DISPATCH_TOKEN" : showSecrets ? token : "$QSTASH_TOKEN";
  return [
    ...lines,
    "",
    "For the official SDKs (@upstash/qstash, @upstash/workflow, Python, Go), e.g. in .env (dispatch env prints them again):",
    ...sdk,
    "",
    service.embedded ? "Try it (delivered to Dispatch's own /echo: watch for the echo line here, or the dashboard):" : "Try it:",
    `  curl -X POST '${service.baseUrl}/v2/publish/${destination}' \\`,
    `    -H "Authorization: Bearer ${bearer}" -H 'Content-Type: application/json' \\`,
    `    -d '{"hello":"world"}'`,
  ].join("\n");
}

/**
 * What a publish naming no dialect is signed with, and its retries' backoff
 * (DISPATCH_DEFAULT_DIALECT); the native default says how receivers that
 * verify with the SDKs' Receiver get their header.
 */
export function dialectLine(config: Pick<Config, "defaultDialect">): string {
  const hint = config.defaultDialect === "svc" ? " (DISPATCH_DEFAULT_DIALECT=upstash signs them Upstash-Signature, as the SDKs' Receiver needs)" : "";
  return `  Plain publishes:     ${config.defaultDialect} dialect, ${dialectSummary(config.defaultDialect)}${hint}`;
}

/**
 * The banner in the SDKs' development mode: its credentials are public, so
 * it shows them, and says what an app sets to use it.
 */
function devBanner(service: StartedService, config: Config): string {
  const url = service.baseUrl ?? `http://127.0.0.1:${config.port}`;
  const port = new URL(url).port;
  return [
    `Dispatch is running as the QStash SDKs' development server (DISPATCH_QSTASH_DEV, role: ${service.role}, embedded Postgres).`,
    `  URL:                 ${url}`,
    `  Dashboard:           ${url}/dashboard (sign in with the token)`,
    `  API reference:       ${url}/docs`,
    `  Token:               ${service.tokens[0]} (the SDKs' public development token)`,
    `  Current signing key: ${service.signingKeys.current}`,
    `  Next signing key:    ${service.signingKeys.next}`,
    dialectLine(config),
    "  SSRF guard:          off (dev mode: your app on this machine is a destination)",
    "",
    "In your app's environment (@upstash/qstash 2.11+, @upstash/workflow 1.3+), nothing else is needed:",
    "  QSTASH_DEV=true",
    ...(port === "8080" ? [] : [`  QSTASH_DEV_PORT=${port}`]),
  ].join("\n");
}
