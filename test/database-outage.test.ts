/**
 * Surviving the database: Postgres restarted (fast and immediate shutdown)
 * under publish and delivery load must not take Dispatch down. Publishes during
 * the outage answer 503 (never 500), and afterwards every accepted message is
 * delivered and no job is left behind. Dispatch runs as a real process (the
 * CLI, with its last-line-of-defence handlers) on a private Postgres cluster
 * that the test restarts.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../src/db/client";
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from "../src/db/embedded/cluster";
import { cloneDatabase } from "./support/database";
import { poll } from "./support/poll";
import { type DispatchProcess, killAllDispatchProcesses, startDispatchProcess } from "./support/processes";
import { sleep, useReceiver } from "./support/receiver";
import { countMessages, storedClaims } from "./support/rows";
import { TEST_TOKEN } from "./support/service";

describe("a connection closed under the driver", () => {
  it("inside transactions, neither crashes the process nor wedges the pool", async () => {
    const url = await cloneDatabase();
    const sql = createSql(url, 2);
    const admin = createSql(url, 1);
    try {
      const failures: string[] = [];
      for (let i = 0; i < 40; i++) {
        await sql
          .begin(async (tx) => {
            const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
            await admin`select pg_terminate_backend(${row!.pid})`;
            await tx`select 1`;
          })
          .catch((error: { code?: string }) => failures.push(error.code ?? "?"));
      }
      expect(failures).toHaveLength(40);
      expect(new Set(failures)).toEqual(new Set(["CONNECTION_CLOSED"]));
      // The pool still serves queries afterwards.
      const [row] = await sql<{ x: number }[]>`select 42 as x`;
      expect(row!.x).toBe(42);
    } finally {
      await sql.end();
      await admin.end();
    }
  });
});

describe("Postgres restarts under load", () => {
  let dataDir: string;
  let port: number;
  let cluster: EmbeddedDatabase;
  let databaseUrl: string;
  const receiver = useReceiver();
  let dispatch: DispatchProcess;
  let baseUrl: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "dispatch-outage-"));
    // Under root, Postgres runs as another user that must be able to enter the folder.
    chmodSync(dataDir, 0o755);
    port = await freePort();
    cluster = await startEmbeddedPostgres(dataDir, { port });
    const admin = createSql(cluster.url, 1);
    await admin`create database dispatch`;
    await admin.end();
    databaseUrl = cluster.url.replace(/\/postgres$/, "/dispatch");
    dispatch = await startDispatchProcess("all", {
      DATABASE_URL: databaseUrl,
      DISPATCH_TOKEN: TEST_TOKEN,
      DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
      DISPATCH_RETRY_DELAY_SCALE: "0.001",
      DISPATCH_WORKER_CONCURRENCY: "32",
    });
    baseUrl = dispatch.output().match(/URL:\s+(\S+)/)![1]!;
  }, 120_000);

  afterAll(async () => {
    await killAllDispatchProcesses();
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Stops the postmaster with `signal` (SIGINT: fast, SIGQUIT: immediate) and starts it again. */
  async function restartPostgres(signal: "SIGINT" | "SIGQUIT"): Promise<void> {
    const pid = Number(readFileSync(join(cluster.directory, "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(pid, signal);
    while (isAlive(pid)) await sleep(20);
    cluster = await startAgain();
  }

  /**
   * Starts the stopped cluster on its port again. After an immediate shutdown the old backends may
   * still hold the shared memory for a moment ("pre-existing shared memory block is still in use"),
   * so a refused start is tried again, as an operator's restart would be.
   */
  async function startAgain(): Promise<EmbeddedDatabase> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startEmbeddedPostgres(dataDir, { port });
      } catch (error) {
        if (attempt === 10) throw error;
        await sleep(300);
      }
    }
  }

  it("keeps the process up, answers 503 during the outage, and delivers every accepted message", async () => {
    const accepted = new Set<string>();
    const statuses = new Map<number, number>();
    let running = true;
    let sequence = 0;
    const publisher = async () => {
      while (running) {
        const body = JSON.stringify({ seq: sequence++ });
        const response = await fetchOrNull(`${baseUrl}/v2/publish/${receiver.url}/hook`, {
          method: "POST",
          headers: { Authorization: `Bearer ${TEST_TOKEN}`, "Content-Type": "application/json" },
          body,
        });
        if (response === null) return void (running = false);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const json = (await response.json()) as { messageId?: string; error?: string };
        if (response.status === 200) accepted.add(json.messageId!);
        else {
          expect(response.status, JSON.stringify(json)).toBe(503);
          expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
          expect(json.error).toMatch(/database/);
          await sleep(50);
        }
      }
    };
    const publishers = Array.from({ length: 8 }, publisher);
    const health: number[] = [];
    for (const signal of ["SIGINT", "SIGQUIT", "SIGINT", "SIGQUIT"] as const) {
      await sleep(700);
      await restartPostgres(signal);
      const restartedAt = accepted.size;
      await poll(async () => accepted.size > restartedAt + 20, async () => `no publish accepted after ${signal}: ${JSON.stringify([...statuses])}\n${dispatch.output().slice(-3000)}`, 10_000);
      health.push((await fetch(`${baseUrl}/health`)).status);
    }
    running = false;
    await Promise.all(publishers);

    expect(dispatch.child.exitCode, dispatch.output()).toBeNull();
    expect(statuses.get(500) ?? 0).toBe(0);
    expect(statuses.get(503) ?? 0, `statuses: ${JSON.stringify([...statuses])}`).toBeGreaterThan(0);
    expect(health.every((status) => status === 200)).toBe(true);

    const sql = createSql(databaseUrl, 1);
    try {
      // Generous: on a busy machine the engine watchdog may have to replace a stalled runner first (~25 s).
      await poll(
        async () => (await pendingCount(sql)) === 0 && (await claimCount(sql)) === 0,
        async () => `${await engineState(sql)}\n${dispatch.output().slice(-5000)}`,
        60_000,
      );
      const delivered = new Set(receiver.requests.map((request) => String(request.headers["svc-message-id"])));
      const missing = [...accepted].filter((id) => !delivered.has(id));
      expect(missing, "accepted but never delivered").toEqual([]);
      expect(await countMessages(sql, { statesOtherThan: ["DELIVERED"] })).toBe(0);
    } finally {
      await sql.end();
    }
    expect(dispatch.output()).not.toMatch(/internal error/);
    // One line when the database went away and one when it came back, not one per poll.
    const lines = dispatch.output().split("\n");
    expect(lines.filter((line) => line.includes("database unreachable")).length).toBeLessThanOrEqual(8);
    // A few lines per outage in all (gone, back, engine replaced), never a stack or a line per poll.
    const afterBanner = lines.slice(lines.findIndex((line) => line.includes("-d '{")) + 1).filter((line) => line.trim());
    expect(afterBanner.length, afterBanner.join("\n")).toBeLessThanOrEqual(24);
  }, 120_000);

  it("reports the database as down on /health and /health/ready while it is stopped (live still answers), and up once it is back", async () => {
    const pid = Number(readFileSync(join(cluster.directory, "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(pid, "SIGINT");
    while (isAlive(pid)) await sleep(20);
    const down = await fetch(`${baseUrl}/health`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: "unavailable", database: "down" });
    const ready = await fetch(`${baseUrl}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", checks: { database: "down", migrations: "unknown", worker: "unknown" } });
    expect((await fetch(`${baseUrl}/health/live`)).status).toBe(200);
    const publish = await fetch(`${baseUrl}/v2/publish/${receiver.url}/hook`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TEST_TOKEN}` },
      body: "while down",
    });
    expect(publish.status).toBe(503);
    cluster = await startAgain();
    await poll(async () => (await fetch(`${baseUrl}/health`)).status === 200, async () => "health still 503");
    expect(await (await fetch(`${baseUrl}/health`)).json()).toEqual({ status: "ok", database: "up" });
    expect(dispatch.child.exitCode).toBeNull();
  }, 60_000);
});

/** `fetch`, or null when the connection fails (the process is gone: the test then fails on its exit code). */
function fetchOrNull(url: string, init: RequestInit): Promise<Response | null> {
  return fetch(url, init).catch(() => null);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const pendingCount = (sql: Sql) => countMessages(sql, { states: ["CREATED", "ACTIVE", "RETRY"] });

const claimCount = async (sql: Sql) => (await storedClaims(sql)).length;

/** Pending messages, claims by worker and the app's connections: what a stuck engine looks like. */
async function engineState(sql: Sql): Promise<string> {
  const jobs = (await storedClaims(sql)).map(({ workerId, messageIds, claimedAt }) => ({
    workerId,
    messages: messageIds.length,
    claimedAt,
  }));
  const connections = await sql`
    select application_name as app, state, left(query, 60) as query, count(*)::int
    from pg_stat_activity where datname = current_database() group by 1, 2, 3`;
  return `pending ${await pendingCount(sql)}, claims ${JSON.stringify(jobs)}, connections ${JSON.stringify(connections)}`;
}

