/**
 * A maintenance service: one kind of housekeeping that the maintenance task
 * runs every five minutes on one worker (maintenance.ts runs them all), as
 * River's `internal/maintenance/` does: each knows what it cleans, nothing
 * else.
 */
import type { Config } from "../../config/config";
import type { DatabaseAvailability } from "../../db/availability";
import type { Sql } from "../../db/client";
import type { Log } from "../../observability/log";

/** What a service runs with. */
export interface MaintenanceContext {
  sql: Sql;
  config: Config;
  log: Log;
  /** A failure that means an outage is its business (logged once there), not the service's. */
  availability: DatabaseAvailability;
  /** Aborted when the worker stops: a long service ends between two steps. */
  signal: AbortSignal;
}

/** One kind of housekeeping. */
export interface MaintenanceService {
  /** Named in the log when it fails. */
  name: string;
  run(context: MaintenanceContext): Promise<unknown>;
}
