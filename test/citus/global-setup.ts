/**
 * The Citus suite's setup: builds dist/ (processes the tests start run it),
 * starts a private 1 + 2 Citus cluster (support/cluster.ts) and provides its
 * coordinator as the run's `adminUrl`, so that every test file's database
 * (test/support/database.ts) is made on the cluster and distributed by
 * `dispatch migrate` (src/db/citus/layout.ts).
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { citusInstalled, startCitusCluster } from "./support/cluster";

declare module "vitest" {
  export interface ProvidedContext {
    /** The workers' superuser URLs (database `postgres`) when the run is on a Citus cluster. */
    citusWorkers: string[];
  }
}

export default async function setup(project: TestProject) {
  if (!citusInstalled()) {
    throw new Error("the Citus suite needs Citus installed for the machine's Postgres (CITUS_SRC=<checkout> cluster.sh build)");
  }
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: "inherit" });
  const cluster = await startCitusCluster();
  project.provide("adminUrl", cluster.coordinator.url());
  project.provide("citusWorkers", cluster.workers.map((worker) => worker.url()));
  return () => cluster.stop();
}
