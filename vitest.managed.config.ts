import { defineConfig } from "vitest/config";

/**
 * The managed-Postgres suite (`npm run test:managed`): Dispatch against
 * private Postgres servers with TLS and a private CA, PgBouncer in
 * transaction and session mode, and pg_dump/pg_restore. It needs the
 * machine's Debian Postgres, PgBouncer and openssl (`.ci/run` installs them
 * when missing), so it is not part of `npm test`. One file at a time: each
 * runs its own servers and poolers.
 */
export default defineConfig({
  test: {
    include: ["test/managed/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/no-internal-errors.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
