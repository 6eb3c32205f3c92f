import { defineConfig } from "vitest/config";

/**
 * The monitoring suite (`npm run test:monitoring`): deploy/monitoring's alert
 * rules checked by promtool, and a real Prometheus scraping a running
 * Dispatch. It needs Debian's `prometheus` package (`.ci/run` installs it
 * when missing), so it is not part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ["test/monitoring/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/no-internal-errors.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 90_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
