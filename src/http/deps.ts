/** What the HTTP layer is built from (`createApp(deps)`). */
import type { Config } from "../config/config";
import type { DatabaseAvailability } from "../db/availability";
import type { Sql } from "../db/client";
import type { TokenSet } from "../domain/access-tokens/token-set";
import type { SigningKeySource } from "../domain/delivery/signing-keys";
import type { SecretBox } from "../domain/secrets/secret-box";
import type { LocalDelivery } from "../domain/publish/local-delivery";
import type { Redactor } from "../domain/messages/redaction";
import type { Log } from "../observability/log";
import type { Metrics } from "../observability/metrics";
import type { Tracing } from "../observability/tracing";
import type { DestinationGuard } from "../outbound/destination-guard";

export interface AppDeps {
  config: Config;
  sql: Sql;
  /** Every token accepted on /v2, full or read-only (a read-only one calls only the operations declared `read`): configured, generated and stored ones. */
  acceptedTokens: TokenSet;
  /** Hides what messages ask to hide (`Redact-Fields`) wherever the API shows them. */
  redactor: Redactor;
  /** Outage tracking: a database outage answers 503 and is logged once. */
  availability: DatabaseAvailability;
  log: Log;
  /** The service's metrics (`/metrics`). */
  metrics: Metrics;
  /** OpenTelemetry spans (off: `NO_TRACING`). */
  tracing: Tracing;
  /** The SSRF guard: publishing to an IP address it refuses is a 400. */
  guard: DestinationGuard;
  /** What stored secrets are sealed with; its session key binds dashboard sessions. */
  secretBox: SecretBox;
  /** Where the signing keys come from (configured, or stored and sealed). */
  signingKeys: SigningKeySource;
  /** The heartbeat id of this process's worker, when it runs one (readiness checks it). */
  workerHeartbeatId?: string | null;
  /** This process's worker, when it runs one: publishes hand it immediate messages (domain/publish/local-delivery.ts). */
  localDelivery?: LocalDelivery | null;
  /** The clock schedules are planned by (tests move it on); the system clock when absent. */
  now?: () => number;
  /** Mount `/echo`, a destination of Dispatch's own (the embedded development database only). */
  echo?: boolean;
}
