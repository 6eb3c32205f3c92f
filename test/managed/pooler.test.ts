/**
 * Dispatch behind PgBouncer, as Supabase's and Neon's pooled URLs and RDS
 * Proxy put it (README "Poolers"). In transaction mode every body arrives
 * byte for byte with the direct URL beside the pooler's, wake-ups come
 * through the direct connection, and a second replica starts; without the
 * direct URL the start is refused naming it. In session mode a start that
 * would wait for a server connection stops within its bound, naming the pool.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { runDispatch } from "../support/processes";
import { type Receiver, startReceiver } from "../support/receiver";
import { startTestService, type TestService } from "../support/service";
import { type Pooler, startPgBouncer } from "./support/pgbouncer";
import { type PrivateServer, startPrivateServer } from "./support/server";

let server: PrivateServer;
let transaction: Pooler;
let session: Pooler;
let receiver: Receiver;
let databases = 0;

beforeAll(async () => {
  server = await startPrivateServer();
  transaction = await startPgBouncer(server, { mode: "transaction", poolSize: 10 });
  session = await startPgBouncer(server, { mode: "session", poolSize: 4 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await transaction?.stop();
  await session?.stop();
  await server?.stop();
});

/** A new empty database on the server, by name. */
async function newDatabase(): Promise<string> {
  const name = `pooled_${++databases}`;
  const admin = createSql(server.url(), 1);
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return name;
}

/** Whether the database has Dispatch's schema. */
async function migrated(name: string): Promise<boolean> {
  const sql = createSql(server.url(name), 1);
  try {
    return (await sql`select 1 from pg_namespace where nspname in ('dispatch', 'graphile_worker')`).length > 0;
  } finally {
    await sql.end();
  }
}

describe("PgBouncer in transaction mode", () => {
  it("as the only URL: the start is refused naming DATABASE_DIRECT_URL, and nothing is migrated", async () => {
    const name = await newDatabase();
    const result = await runDispatch(["start"], { DATABASE_URL: transaction.url(name), PORT: "0", HOST: "127.0.0.1" });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^dispatch: DATABASE_URL \(127\.0\.0\.1:\d+\/pooled_\d+\) goes through a transaction-mode pooler: two sessions were served by one server connection\. .*set DATABASE_DIRECT_URL to a direct/,
    );
    expect(await migrated(name)).toBe(false);
  });

  it("with DATABASE_DIRECT_URL: two replicas start, every body arrives byte for byte, wake-ups come through the direct connection", async () => {
    const name = await newDatabase();
    const lines: string[] = [];
    // Polling once a minute: a delivery within the test's time was woken by a NOTIFY.
    const config = { databaseUrl: transaction.url(name), databaseDirectUrl: server.url(name), pollIntervalMs: 60_000 };
    const replicas: TestService[] = [];
    try {
      for (let index = 0; index < 2; index++) replicas.push(await startTestService(config, { log: (line) => lines.push(line) }));
      const before = receiver.requests.length;
      const bodies = Array.from({ length: 300 }, (_, index) => (index % 2 === 0 ? randomBytes(200 + index) : Buffer.from(JSON.stringify({ seq: index }))));
      for (let start = 0; start < bodies.length; start += 50) {
        const answers = await Promise.all(bodies.slice(start, start + 50).map((body, offset) =>
          replicas[(start + offset) % 2]!.api(`/v2/publish/${receiver.url}/pooled-${start + offset}`, {
            method: "POST",
            body,
            headers: { "Content-Type": "application/octet-stream" },
          })));
        expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      }
      await receiver.waitFor(before + bodies.length, 30_000);
      const received = new Map(receiver.requests.slice(before).map((request) => [request.path, request.body]));
      expect(bodies.filter((body, index) => !received.get(`/pooled-${index}`)?.equals(body))).toHaveLength(0);
      expect(lines.filter((line) => /prepared statement|unreachable|replaced/.test(line))).toEqual([]);
      // The listening connections are the server's own sessions, not the pooler's.
      const admin = createSql(server.url(name), 1);
      try {
        const listening = await admin<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = ${name} and application_name = 'dispatch' and query ~* '^\\s*listen'`;
        expect(listening[0]!.n).toBeGreaterThanOrEqual(2);
      } finally {
        await admin.end();
      }
    } finally {
      for (const replica of replicas) await replica.stop();
    }
  });
});

describe("PgBouncer in session mode with a small pool", () => {
  it("a replica that would wait for a server connection stops within its bound, naming the pool and what it holds", async () => {
    const name = await newDatabase();
    // The first replica (an API process with a pool of 2) holds 3 of the pooler's 4 server connections.
    const first = await startTestService({ databaseUrl: session.url(name), databasePoolSize: 2 }, { role: "api" });
    try {
      await Promise.all(Array.from({ length: 8 }, () => first.api("/v2/queues")));
      const result = await runDispatch(["start"], { DATABASE_URL: `${session.url(name)}&connect_timeout=2`, PORT: "0", HOST: "127.0.0.1" });
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^dispatch: DATABASE_URL \(127\.0\.0\.1:\d+\/pooled_\d+\): .* got no answer within 4 s: a pooler in front of the server may have no free server connection \(its pool size\), .*this process holds up to 23 connections/,
      );
    } finally {
      await first.stop();
    }
  });
});
