/**
 * The maintenance task (a graphile-worker cron job, every five minutes, on
 * one worker): runs every maintenance service in turn. A service that fails
 * is logged and does not keep the others from running; the task then fails,
 * so graphile-worker retries it.
 */
import { releaseAllParked } from "../../domain/flow-control/release";
import { forgetIdleDestinations } from "../../domain/destinations/destinations";
import { purgeExpiredDeduplicationKeys } from "../../domain/publish/deduplication";
import { markStalledRuns, stalledRunReport } from "../../domain/workflows/stalled";
import { purgeStaleNotifications } from "../../domain/workflows/waits";
import { retention } from "./retention";
import type { MaintenanceContext, MaintenanceService } from "./service";

/** The services, in the order they run; retention last, as it may take minutes. */
export const MAINTENANCE_SERVICES: MaintenanceService[] = [
  {
    // Deduplication ids and content hashes older than their window.
    name: "expired deduplication keys",
    run: ({ sql }) => purgeExpiredDeduplicationKeys(sql),
  },
  {
    // Workflow notifications no wait took within a day (docs/workflow-protocol.md §7.5).
    name: "stale workflow notifications",
    run: ({ sql }) => purgeStaleNotifications(sql),
  },
  {
    // Started runs with nothing scheduled for five minutes: marked, and each logged once (README "Workflows").
    name: "stalled workflow runs",
    async run({ sql, log }) {
      for (const run of await markStalledRuns(sql)) log(stalledRunReport(run), { runId: run.runId });
    },
  },
  {
    // Messages held by flow control that nothing else would release (a key's wake-up lost with a crashed worker).
    name: "parked flow-control messages",
    run: ({ sql }) => sql.begin((tx) => releaseAllParked(tx)),
  },
  {
    // Destinations idle longer than DISPATCH_RETENTION (closed, nothing in their line); they come back with their next attempt.
    name: "idle destinations",
    run: ({ sql, config }) => forgetIdleDestinations(sql, config.retentionMs),
  },
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
