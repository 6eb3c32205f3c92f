/** Removes workflow notifications no wait took within a day (docs/workflow-protocol.md §7.5). */
import { purgeStaleNotifications } from "../../domain/workflows/waits";
import type { MaintenanceService } from "./service";

export const staleNotifications: MaintenanceService = {
  name: "stale workflow notifications",
  run: ({ sql }) => purgeStaleNotifications(sql),
};
