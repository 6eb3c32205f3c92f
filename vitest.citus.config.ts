import { defineConfig } from "vitest/config";

/**
 * The Citus suite (`npm run test:citus`): Dispatch on a private 1 + 2 Citus
 * cluster (test/citus/global-setup.ts), every file's database distributed
 * (src/db/citus/layout.ts). Its own tests (test/citus/) and the main suite's
 * files that carry the guarantees Citus must keep, run unchanged against the
 * cluster. It needs Citus installed for the machine's Postgres, which no
 * registry serves (`.ci/run` runs it when it is installed, and says so when not).
 */
/** The main suite's files run on the cluster unchanged: what each guarantee Citus must keep is tested by. */
const GUARANTEES = [
  "test/delivery.test.ts",
  "test/retries.test.ts",
  "test/deliver-from-publish.test.ts",
  "test/insert-claimed.test.ts",
  "test/deduplication.test.ts",
  "test/queues/pause-resume.test.ts",
  "test/flow-control/across-workers.test.ts",
  "test/workflows/basic.test.ts",
  "test/crash-recovery.test.ts",
  "test/schedules/schedules.test.ts",
  "test/dlq/retrying.test.ts",
  "test/retention.test.ts",
  "test/logs.test.ts",
  "test/workflows/fidelity.test.ts",
  "test/projects/workflows.test.ts",
  "test/dashboard.test.ts",
  "test/flow-control/flow-control.test.ts",
  "test/queues/parallelism.test.ts",
  "test/bulk-cancel.test.ts",
  "test/workflows/waiters-notify.test.ts",
  "test/workflows/dlq-resume.test.ts",
  "test/destinations/circuit.test.ts",
  "test/messages.test.ts",
  "test/projects/isolation.test.ts",
  "test/metrics.test.ts",
  "test/metrics-overdue.test.ts",
];

export default defineConfig({
  test: {
    include: ["test/citus/**/*.test.ts", ...GUARANTEES],
    globalSetup: ["test/citus/global-setup.ts"],
    setupFiles: ["test/support/no-internal-errors.ts", "test/citus/support/drop-databases.ts"],
    pool: "forks",
    isolate: false,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
