/**
 * What graphile-worker runs: Dispatch's timed jobs. The maintenance task
 * (every five minutes, worker/maintenance/) and a workflow wait's timeout
 * (added by domain/workflows/wait-timeouts.ts at the wait's deadline). Jobs carry
 * ids, never bodies.
 */
import type { TaskList } from "graphile-worker";
import type { Config } from "../../config/config";
import type { DatabaseAvailability } from "../../db/availability";
import type { Sql } from "../../db/client";
import { WAIT_TIMEOUT_TASK } from "../../domain/workflows/wait-timeouts";
import type { MessageSettings } from "../../domain/publish/options";
import { fireWaitTimeout } from "../../domain/workflows/waits";
import type { Log } from "../../observability/log";
import { runMaintenance } from "../maintenance/maintenance";

export const MAINTENANCE_TASK = "maintenance";
/** When the maintenance task runs: every five minutes. */
export const CRONTAB = `*/5 * * * * ${MAINTENANCE_TASK}`;

/** The task list, over what the tasks need. */
export function timedJobTasks(deps: {
  sql: Sql;
  config: Config;
  log: Log;
  availability: DatabaseAvailability;
  settings: MessageSettings;
}): TaskList {
  const { sql, config, log, availability, settings } = deps;
  return {
    // graphile-worker aborts the signal shortly after a graceful stop begins: retention ends between two batches.
    [MAINTENANCE_TASK]: (_payload, helpers) => runMaintenance({ sql, config, log, availability, signal: helpers.abortSignal! }),
    [WAIT_TIMEOUT_TASK]: async (payload) => {
      const { waiterId } = payload as { waiterId: number };
      await sql.begin((tx) => fireWaitTimeout(tx, waiterId, settings));
    },
  };
}
