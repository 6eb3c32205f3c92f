/**
 * The Citus suite's setup: builds dist/ (processes the tests start run it),
 * starts a private 1 + 2 Citus cluster (support/cluster.ts) and provides its
 * coordinator as the run's `adminUrl`, so that every test file's database
 * (test/support/database.ts) is made on the cluster and distributed by
 * `dispatch migrate` (src/db/citus/layout.ts).
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { inMemoryScratch } from "../support/global-setup";
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
  // The nodes' folders in memory when there is room, as the main suite's cluster (test/support/global-setup.ts).
  const scratch = inMemoryScratch();
  if (scratch) process.env.TMPDIR = scratch;
  const cluster = await startCitusCluster();
  project.provide("adminUrl", cluster.coordinator.url());
  project.provide("citusWorkers", cluster.workers.map((worker) => worker.url()));
  return async () => {
    await cluster.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  };
}
