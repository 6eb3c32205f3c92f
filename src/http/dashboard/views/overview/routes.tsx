/** `GET /dashboard`: the overview, read in one snapshot. */
import { Hono } from "hono";
import { lastHour } from "../../../../domain/overview/activity";
import { holdingCounts } from "../../../../domain/destinations/destinations";
import { failingNow } from "../../../../domain/overview/failing-now";
import { countByState } from "../../../../domain/overview/state-counts";
import { readTotals } from "../../../../domain/overview/totals";
import { quotaUse } from "../../../../domain/projects/quotas";
import type { AppDeps } from "../../../deps";
import type { DashboardEnv } from "../../env";
import { nowOf } from "../../kit/page";
import { FAILING_SHOWN } from "./failing-now";
import { OverviewPage } from "./overview-page";

/** `GET /dashboard`. */
export function overviewRoutes(deps: AppDeps) {
  return new Hono<DashboardEnv>().get("/", async (c) => {
    const project = c.get("project");
    const overview = await deps.sql.begin("isolation level repeatable read read only", async (tx) => ({
      messages: await countByState(tx, "messages", project),
      runs: await countByState(tx, "workflow_runs", project),
      hour: await lastHour(tx, project),
      totals: await readTotals(tx, project),
      failing: await failingNow(tx, project, FAILING_SHOWN),
      holding: c.get("viewer").operator ? await holdingCounts(tx) : null,
      quota: await quotaUse(tx, project),
    }));
    return c.render(<OverviewPage {...overview} now={nowOf(deps)} />, { title: "Overview", section: "overview" });
  });
}
