/**
 * A role's connection budget and its idle sessions, as managed databases set
 * them (README "Connection budget"): a CONNECTION LIMIT the process would not
 * fit in stops the start with one line saying which pool size would; the size
 * it names works within the limit; a server out of slots is one line too; and
 * sessions the server closes while idle are reopened without a word. A
 * start's checks and migrations share one session.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { prepareDatabase } from "../src/database";
import { createSql } from "../src/db/client";
import { connectionBudget } from "../src/db/connection/budget";
import { poll } from "./support/poll";
import { runDispatch } from "./support/processes";
import { useReceiver } from "./support/receiver";
import { asAdmin, createRole, dropMade, migratedDatabase, type TestRole } from "./support/roles";
import { startTestService, testConfig } from "./support/service";

let databaseUrl: string;
let databaseName: string;
const receiver = useReceiver();

beforeAll(async () => {
  ({ url: databaseUrl, name: databaseName } = await migratedDatabase());
});
afterAll(async () => {
  await dropMade();
});

/** A role that owns nothing but may use everything in the test database. */
async function roleWith(options: string): Promise<TestRole> {
  const role = await createRole(options);
  await asAdmin(`grant all on database ${databaseName} to ${role.name}`);
  await asAdmin(
    `grant all on schema dispatch, graphile_worker to ${role.name};
     grant all on all tables in schema dispatch, graphile_worker to ${role.name};
     grant all on all sequences in schema dispatch, graphile_worker to ${role.name};
     alter role ${role.name} bypassrls`,
    databaseUrl,
  );
  return role;
}

/** The server processes of `role`'s connections now (of those whose last statement was a LISTEN, with `listening`). */
async function sessionsOf(role: TestRole, listening = false): Promise<number[]> {
  const sql = createSql(databaseUrl, 1);
  try {
    const rows = await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where usename = ${role.name} and (not ${listening} or query ~* '^\s*listen')`;
    return rows.map((row) => row.pid);
  } finally {
    await sql.end();
  }
}

describe("a role's CONNECTION LIMIT", () => {
  it("too small for the process: the start stops with one line naming the pool size that fits", async () => {
    const role = await roleWith("connection limit 6");
    const result = await runDispatch(["start"], { DATABASE_URL: role.urlFor(databaseUrl), PORT: "0", HOST: "127.0.0.1" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `dispatch: DATABASE_URL: role "${role.name}" may hold 6 connections (CONNECTION LIMIT) and 0 are in use by other sessions; ` +
        "this process holds up to 23 connections to the server (DISPATCH_DATABASE_POOL_SIZE=20 for queries, 1 listening, 2 for graphile-worker's timed jobs): " +
        "lower DISPATCH_DATABASE_POOL_SIZE (at least 2), or raise the role's CONNECTION LIMIT or the server's max_connections (DISPATCH_DATABASE_POOL_SIZE=3 would fit)",
    );
  });

  it("with the pool size it names, the process stays within the limit under load and delivers everything", async () => {
    const role = await roleWith("connection limit 6");
    const dispatch = await startTestService({ databaseUrl: role.urlFor(databaseUrl), databasePoolSize: 3 });
    try {
      const before = receiver.requests.length;
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, index) => dispatch.api(`/v2/publish/${receiver.url}/limit-${index}`, { method: "POST", body: `${index}` })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      await receiver.waitFor(before + 60);
      expect((await sessionsOf(role)).length).toBeLessThanOrEqual(6);
    } finally {
      await dispatch.stop();
    }
  });

  it("a server with no slot left for the role: one line, Postgres' message and what to change", async () => {
    const role = await roleWith("connection limit 1");
    const result = await runDispatch(["migrate"], { DATABASE_URL: role.urlFor(databaseUrl) });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`too many connections for role "${role.name}" (SQLSTATE 53300)`);
    expect(lines[0]).toContain("lower DISPATCH_DATABASE_POOL_SIZE");
  });
});

describe("sessions the server closes while idle (idle_session_timeout)", () => {
  it("are reopened quietly: no outage, no engine replacement, every message delivered", async () => {
    const role = await roleWith("");
    await asAdmin(`alter role ${role.name} set idle_session_timeout = '1s'`);
    const lines: string[] = [];
    const dispatch = await startTestService({ databaseUrl: role.urlFor(databaseUrl) }, { log: (line) => lines.push(line) });
    try {
      const before = receiver.requests.length;
      // The listening sessions (postgres.js's and graphile-worker's) sit idle between notifications.
      // Once both are open: right after the start, one may still be on its way (or just closed and reopening).
      let firstListeners: number[] = [];
      await poll(async () => (firstListeners = await sessionsOf(role, true)).length >= 2, "both listening sessions to be open");
      // Seven seconds of sparse traffic: every connection sits idle past the timeout again and again.
      for (let index = 0; index < 14; index++) {
        const answer = await dispatch.api(`/v2/publish/${receiver.url}/idle-${index}`, { method: "POST", body: `${index}` });
        expect(answer.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await receiver.waitFor(before + 14);
      // The server did close them meanwhile, and they were opened again.
      expect(firstListeners.length).toBeGreaterThanOrEqual(2);
      expect((await sessionsOf(role)).filter((pid) => firstListeners.includes(pid))).toEqual([]);
      // A listener the server has just closed again is reopened at once, but not within the same instant.
      await poll(async () => (await sessionsOf(role, true)).length >= 2, "both listening sessions to be open");
      expect(lines.filter((line) => /unreachable|reachable again|replaced|stalled|restart/.test(line))).toEqual([]);
    } finally {
      await dispatch.stop();
    }
  });
});

describe("the sessions a start opens before its pools", () => {
  it("are three: one postgres.js session for the checks and then the migrations, and the two node-postgres ones of the session check", async () => {
    const { url, name } = await migratedDatabase();
    const admin = createSql(inject("adminUrl"), 1);
    // Counted once every session has gone: a backend's counts reach pg_stat_database before it leaves pg_stat_activity.
    const closed = () => poll(async () => (await admin`select 1 from pg_stat_activity where datname = ${name}`).length === 0, "no session left");
    const opened = async () => (await admin<{ sessions: number }[]>`select sessions::int from pg_stat_database where datname = ${name}`)[0]!.sessions;
    try {
      await closed();
      const before = await opened();
      await prepareDatabase(testConfig(url), () => {}, { budget: connectionBudget(2, true), migrateFirst: true, noticeLevel: "debug" });
      await closed();
      expect((await opened()) - before).toBe(3);
    } finally {
      await admin.end();
    }
  });
});
