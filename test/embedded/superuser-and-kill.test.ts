/**
 * The embedded default as a newcomer lives with it (README "The two
 * commands"), part one: its superuser's password, and `npm start` killed
 * outright (SIGKILL of its whole process group, as the OOM killer or a
 * container runtime does) starts again with no manual step and delivers what
 * it had accepted; its Postgres does not outlive it by more than seconds (the
 * watchdog), and one left running anyway is restarted cleanly. Run from a
 * copy of the project in a `mktemp -d` folder (mode 700): as root the
 * embedded database then runs as `postgres` with its data relocated.
 * Part two is beside-a-service.test.ts.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { isAlive } from "../../src/db/embedded/cluster-users";
import { poll } from "../support/poll";
import { ALLOW_LOCAL, crash, publishTo, stop, useProjectCopy } from "../support/project-copy";
import { useReceiver } from "../support/receiver";

const copy = useProjectCopy();
const { start, serverPid } = copy;
const receiver = useReceiver();

/** The embedded Postgres's port, as its postmaster.pid says. */
function serverPort(): number {
  return Number(readFileSync(join(copy.dir(), ".dispatch", "pg", "postmaster.pid"), "utf8").split("\n")[3]);
}

/** Whether the cluster's superuser signs in with `password`: true, or the server's error. */
async function signsIn(password: string): Promise<true | string> {
  const sql = createSql(`postgres://dispatch:${encodeURIComponent(password)}@127.0.0.1:${serverPort()}/postgres?sslmode=disable`, 1);
  try {
    await sql`select 1`;
    return true;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

describe("the embedded database's superuser", () => {
  const passwordPath = () => join(copy.dir(), ".dispatch", "postgres-password");

  it("has a random password, kept 0600 in the data folder: the fixed one of earlier versions is refused", async () => {
    const running = await start();
    expect(statSync(passwordPath()).mode & 0o777).toBe(0o600);
    const password = readFileSync(passwordPath(), "utf8").trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await signsIn(password)).toBe(true);
    expect(await signsIn("dispatch")).toMatch(/password authentication failed/);
    await stop(running.child);
  });

  it("of a cluster made by an earlier version is re-keyed at its next start, saying so in one line", async () => {
    const first = await start();
    const sql = createSql(`postgres://dispatch:${readFileSync(passwordPath(), "utf8").trim()}@127.0.0.1:${serverPort()}/postgres?sslmode=disable`, 1);
    await sql`alter role dispatch password 'dispatch'`;
    await sql.end();
    rmSync(passwordPath());
    await stop(first.child);

    const second = await start();
    expect(second.output()).toContain("embedded Postgres: its superuser had the fixed password of earlier versions; it now has a random one");
    expect(await signsIn("dispatch")).toMatch(/password authentication failed/);
    expect(await signsIn(readFileSync(passwordPath(), "utf8").trim())).toBe(true);
    expect(second.token).toBe(first.token);
    await stop(second.child);
  });
});

describe("npm start killed outright", () => {
  it("starts again with no manual step and delivers every message accepted before the kill; its Postgres went with it", async () => {
    const first = await start([], ALLOW_LOCAL);
    const before = receiver.requests.length;
    // Delayed (20 s scaled to 2 s): still waiting when the process dies.
    for (let index = 0; index < 10; index++) {
      const answer = await publishTo(first, `/v2/publish/${receiver.url}/crash-${index}`, { body: `${index}`, headers: { "Svc-Delay": "20s" } });
      expect(answer.status).toBe(200);
    }
    const postgres = serverPid()!;
    await crash(first.child);
    // The watchdog stops the server within seconds of its last user's death.
    await poll(() => !isAlive(postgres), "the killed service's Postgres stopped", 15_000);

    const second = await start([], ALLOW_LOCAL);
    expect(second.token).toBe(first.token);
    await poll(() => receiver.requests.filter((request, index) => index >= before && request.path.startsWith("/crash-")).length === 10, "the 10 messages");
  });

  it("restarts a Postgres left running without its watchdog, saying so in one line", async () => {
    const first = await start([], ALLOW_LOCAL);
    const postgres = serverPid()!;
    // The watchdog runs as sh -c: nothing in the data folder is run (earlier versions wrote watchdog.sh there).
    expect(existsSync(join(copy.dir(), ".dispatch", "watchdog.sh"))).toBe(false);
    expect(watchdogPids().length).toBeGreaterThan(0);
    await killWatchdog();
    await crash(first.child);
    expect(isAlive(postgres)).toBe(true);
    const second = await start([], ALLOW_LOCAL);
    expect(second.output()).toContain(`was left running (pid ${postgres}) by a Dispatch process that is gone; stopped it and started it again`);
    expect(isAlive(postgres)).toBe(false);
    expect((await publishTo(second, `/v2/publish/${receiver.url}/after-restart`, { body: "x" })).status).toBe(200);
  });
});

/**
 * Kills the watchdog: every process running as `dispatch-watchdog` for this
 * project's cluster (from the process list), until none is left. The
 * shell forks a copy of itself for each `$(...)` it runs, with the same
 * command line, and once process ids wrap around such a copy can be listed
 * before the watchdog itself: killing only the first one found could leave
 * the watchdog running.
 */
async function killWatchdog(): Promise<void> {
  await poll(() => {
    const pids = watchdogPids();
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    return pids.length === 0;
  }, "no watchdog process left");
}

function watchdogPids(): number[] {
  return readdirOrEmpty("/proc").filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const watching = args.includes("dispatch-watchdog") && args.some((arg) => arg.startsWith(join(copy.dir(), ".dispatch")));
      return watching && isAlive(Number(entry));
    } catch {
      return false; // Gone meanwhile.
    }
  }).map(Number);
}

function readdirOrEmpty(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

