/**
 * The Citus suite's setup file beside no-internal-errors.ts: at the end of each
 * test file, after the file's own hooks have stopped what it started, the
 * databases it made on the cluster are dropped. Each kept a maintenance daemon
 * on every node: without the drop, the server processes grew with every file
 * (from about 90 to over 500 in one run; with it, at most about 140, and the
 * run took 404 s instead of 560-606 s, 0.73 of the CPU).
 */
import { afterAll } from "vitest";
import { dropClusterDatabases } from "../../support/database";

afterAll(dropClusterDatabases);
