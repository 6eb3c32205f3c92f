/** Marks started workflow runs that have had nothing scheduled for five minutes, and logs each once (README "Workflows"). */
import { markStalledRuns, stalledRunReport } from "../../domain/workflows/stalled";
import type { MaintenanceService } from "./service";

export const stalledRuns: MaintenanceService = {
  name: "stalled workflow runs",
  async run({ sql, log }) {
    for (const run of await markStalledRuns(sql)) log(stalledRunReport(run), { runId: run.runId });
  },
};
