import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The browser tests, the managed-Postgres suite, the monitoring suite and the Citus suite have their own
    // commands and configurations (vitest.browser.config.ts, vitest.managed.config.ts, vitest.monitoring.config.ts,
    // vitest.citus.config.ts).
    exclude: ["test/browser/**", "test/managed/**", "test/monitoring/**", "test/citus/**", "**/node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/no-internal-errors.ts"],
    pool: "forks",
    // A worker imports src/ once and runs file after file with it: isolated, each of the 105 files
    // imported it afresh (345 s of a 588 s run went to imports, 25 s now). Each file still gets its own
    // database and service (useDispatch); module state shared across files is caches keyed by what they hold.
    isolate: false,
    // Five files at once: most of a file's time is spent waiting on its service, receivers and child
    // processes, so several share this project's two-core machines well (vitest's default would run one at
    // a time there). Beside a core spinning at 75 % the suite took 120 s with three and 106-109 s with
    // four (97 % of both cores busy; five: 107 s); with the cluster in memory (global-setup.ts), 101-105 s
    // with four and 95-105 s with five; on 2026-11-29, one machine, one hour: 103.5 and 106.9 s with four,
    // 101.0, 101.2 and 101.4 s with five; quiet, 93.5 s and 91.7 s. That evening the same machine ran
    // that commit (2fe7d11) quiet in 309 and 350 s, and this suite beside the spinner in 285 and 292 s,
    // alternated within the hour (0.88 of its time; 0.82 of its CPU). No test measures time, so the load
    // changes no result.
    maxWorkers: 5,
    // A guard against a hung test, not a measure: CI machines can be several times slower than this
    // one (the slowest test here takes 17 s; a 5 MiB workflow once took 32 s beside two other files).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
