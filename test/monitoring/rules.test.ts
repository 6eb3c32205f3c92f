/**
 * deploy/monitoring/alerts.yml passes Prometheus's own checks: `promtool
 * check rules` and the unit tests in alerts.test.yml (series that fire each
 * alert, and series beside them that must not).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const MONITORING = fileURLToPath(new URL("../../deploy/monitoring/", import.meta.url));
const promtool = (...args: string[]) => spawnSync("promtool", args, { cwd: MONITORING, encoding: "utf8" });

it("checks the rules", () => {
  const checked = promtool("check", "rules", "alerts.yml");
  expect(checked.error, "Debian's prometheus package provides promtool (.ci/run installs it)").toBeUndefined();
  expect([checked.status, checked.stdout.trim()]).toEqual([0, "Checking alerts.yml\n  SUCCESS: 8 rules found"]);
});

it("passes the rules' unit tests", () => {
  const tested = promtool("test", "rules", "alerts.test.yml");
  expect(tested.stdout + tested.stderr).toContain("SUCCESS");
  expect(tested.status).toBe(0);
});
