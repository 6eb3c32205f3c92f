/**
 * Releases messages held by flow control that nothing else would release: a
 * key's wake-up lost with a crashed worker is taken up here at the latest.
 */
import { releaseAllParked } from "../../domain/flow-control/release";
import type { MaintenanceService } from "./service";

export const parkedFlowControl: MaintenanceService = {
  name: "parked flow-control messages",
  run: ({ sql }) => sql.begin((tx) => releaseAllParked(tx)),
};
