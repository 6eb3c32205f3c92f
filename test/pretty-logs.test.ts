/**
 * Logs are JSON lines on a pipe or a file (what a container's log collector
 * reads) and readable lines on a terminal (pino-pretty). The terminal is a
 * real one: util-linux's `script` runs the logger on a pseudo-terminal.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TSX = `${ROOT}node_modules/.bin/tsx`;
const LINE = "test/support/log-line.ts";
const ESCAPES = /\x1b\[[0-9;]*m/g;

it("writes a JSON line to a pipe", () => {
  const ran = spawnSync(TSX, [LINE], { cwd: ROOT, encoding: "utf8" });
  expect(ran.status).toBe(0);
  expect(JSON.parse(ran.stderr.trim())).toMatchObject({ level: 40, service: "dispatch", messageId: "msg_pretty", msg: "a line for the reader" });
});

it("writes a readable line to a terminal", () => {
  const ran = spawnSync("script", ["-qfec", `${TSX} ${LINE}`, "/dev/null"], { cwd: ROOT, encoding: "utf8" });
  expect(ran.error, "util-linux's script runs the logger on a terminal").toBeUndefined();
  const text = ran.stdout.replace(ESCAPES, "").replace(/\r/g, "");
  expect(text).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d{4}\] WARN: a line for the reader\n/);
  expect(text).toContain('messageId: "msg_pretty"');
  expect(text).not.toContain('{"level"');
});
