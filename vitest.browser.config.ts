import { defineConfig } from "vitest/config";

/**
 * The browser tests (`npm run test:browser`): the dashboard driven in the
 * machine's headless Chromium by playwright-core. One file at a time: each
 * runs a service, receivers and a browser.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/no-internal-errors.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
