/**
 * Forgets destinations idle for longer than DISPATCH_RETENTION: no attempt
 * since, circuit closed, nothing waiting in their line. Their rows come back
 * with their next attempt.
 */
import { forgetIdleDestinations } from "../../domain/destinations/destinations";
import type { MaintenanceService } from "./service";

export const idleDestinations: MaintenanceService = {
  name: "idle destinations",
  run: ({ sql, config }) => forgetIdleDestinations(sql, config.retentionMs),
};
