/** Forgets deduplication ids and content hashes older than their window. */
import { purgeExpiredDeduplicationKeys } from "../../domain/publish/deduplication";
import type { MaintenanceService } from "./service";

export const expiredDeduplicationKeys: MaintenanceService = {
  name: "expired deduplication keys",
  run: ({ sql }) => purgeExpiredDeduplicationKeys(sql),
};
