/**
 * Removes what finished longer ago than its retention (README "Retention"),
 * paced to work a share of the time (DISPATCH_RETENTION_PACE) for at most
 * four minutes of each five; a stopping worker ends it between two batches.
 */
import type { Config } from "../../config/config";
import { type Removed, removeExpired, type Retention } from "../../domain/retention";
import type { MaintenanceService } from "./service";

/** Longest a run spends removing; the rest waits for the next run. */
const RETENTION_BUDGET_MS = 4 * 60_000;

export const retention: MaintenanceService = {
  name: "retention",
  async run({ sql, config, log, signal }) {
    const pace = { budgetMs: RETENTION_BUDGET_MS, duty: config.retentionPace, signal };
    const removed = await removeExpired(sql, retentionOf(config), pace);
    if (removed.messages + removed.dlq + removed.workflowRuns > 0) log(removedReport(removed), { level: "info", ...removed });
  },
};

function retentionOf(config: Config): Retention {
  return { messagesMs: config.retentionMs, dlqMs: config.dlqRetentionMs, workflowRunsMs: config.workflowRetentionMs };
}

function removedReport(removed: Removed): string {
  return `retention: removed ${removed.messages} messages, ${removed.dlq} DLQ entries, ${removed.workflowRuns} workflow runs`;
}
