/**
 * The maintenance task (a graphile-worker cron job, every five minutes, on
 * one worker): runs every maintenance service in turn. A service that fails
 * is logged and does not keep the others from running; the task then fails,
 * so graphile-worker retries it.
 */
import { expiredDeduplicationKeys } from "./deduplication-keys";
import { idleDestinations } from "./idle-destinations";
import { staleNotifications } from "./notifications";
import { parkedFlowControl } from "./parked-flow-control";
import { retention } from "./retention";
import type { MaintenanceContext, MaintenanceService } from "./service";
import { stalledRuns } from "./stalled-runs";

/** The services, in the order they run; retention last, as it may take minutes. */
export const MAINTENANCE_SERVICES: MaintenanceService[] = [
  expiredDeduplicationKeys,
  staleNotifications,
  stalledRuns,
  parkedFlowControl,
  idleDestinations,
  retention,
];

/** Runs each service once; throws the first failure after all have run. */
export async function runMaintenance(context: MaintenanceContext): Promise<void> {
  const failures: unknown[] = [];
  for (const service of MAINTENANCE_SERVICES) {
    try {
      await service.run(context);
    } catch (error) {
      failures.push(error);
      if (!context.availability.failed(error)) context.log(`maintenance: ${service.name} failed: ${(error as Error).message}`);
    }
  }
  if (failures.length > 0) throw failures[0];
}
