/**
 * Least privilege, as a managed database's operator sets it up (README
 * "Database privileges"): `dispatch migrate` as a role that may only CONNECT
 * and CREATE on a database it does not own; `dispatch start` as a role with
 * nothing but USAGE and DML, with and without DISPATCH_MIGRATE=false; and the
 * one clear line a role lacking a privilege gets, with nothing half-made.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../src/db/client";
import { poll } from "./support/poll";
import { runDispatch } from "./support/processes";
import { useReceiver } from "./support/receiver";
import { asAdmin, createRole, dropMade, emptyDatabase, readmeGrants, type TestRole } from "./support/roles";
import { startTestService } from "./support/service";

let database: { url: string; name: string };
let owner: TestRole;
let app: TestRole;
const receiver = useReceiver();

beforeAll(async () => {
  database = await emptyDatabase();
  owner = await createRole();
  app = await createRole();
  // The README's first block, as the database's owner runs it (its CREATE ROLE lines made the roles above).
  const grants = readmeGrants("migrate", { database: database.name, owner: owner.name, runtime: app.name });
  await asAdmin(grants.split("\n").filter((line) => !/^CREATE ROLE/i.test(line)).join("\n"));
});
afterAll(async () => {
  await dropMade();
});

/** Whether `schema` exists in the database. */
async function hasSchema(url: string, schema: string): Promise<boolean> {
  const sql = createSql(url, 1);
  try {
    return (await sql`select 1 from pg_namespace where nspname = ${schema}`).length > 0;
  } finally {
    await sql.end();
  }
}

describe("database privileges", () => {
  it("a role with CONNECT only: migrate stops with Postgres' message and what to grant, and creates nothing", async () => {
    const connectOnly = await createRole();
    await asAdmin(`grant connect on database ${database.name} to ${connectOnly.name}`);
    const result = await runDispatch(["migrate"], { DATABASE_URL: connectOnly.urlFor(database.url) });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`permission denied for database ${database.name} (SQLSTATE 42501)`);
    expect(lines[0]).toContain("GRANT CREATE ON DATABASE");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await hasSchema(database.url, "dispatch")).toBe(false);
    // Starting is the same: nothing can run on a database that was never migrated.
    const start = await runDispatch(["start"], { DATABASE_URL: connectOnly.urlFor(database.url), PORT: "0", HOST: "127.0.0.1" });
    expect(start.code).toBe(1);
    expect(start.stderr).toContain("(SQLSTATE 42501)");
  });

  it("a role with CONNECT and CREATE on a database it does not own migrates it", async () => {
    const result = await runDispatch(["migrate"], { DATABASE_URL: owner.urlFor(database.url) });
    expect(result.code, result.stderr).toBe(0);
    expect(await hasSchema(database.url, "dispatch")).toBe(true);
    expect(await hasSchema(database.url, "graphile_worker")).toBe(true);
  });

  it("a runtime role with USAGE and DML only starts with DISPATCH_MIGRATE=false and delivers", async () => {
    const grants = readmeGrants("runtime", { database: database.name, owner: owner.name, runtime: app.name });
    await asAdmin(grants, owner.urlFor(database.url));
    const dispatch = await startTestService({ databaseUrl: app.urlFor(database.url), migrate: false });
    try {
      const published = await dispatch.api(`/v2/publish/${receiver.url}/least-privilege`, { method: "POST", body: "hello" });
      expect(published.status).toBe(200);
      await poll(() => receiver.requests.some((request) => request.path === "/least-privilege"), "the delivery");
      const created = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "q", parallelism: 2 }) });
      expect(created.status).toBe(200);
      // graphile-worker works as this role too (its tables have row-level security): it registered the maintenance cron.
      const admin = createSql(database.url, 1);
      try {
        await poll(async () => (await admin`select 1 from graphile_worker._private_known_crontabs`).length > 0, "the maintenance cron");
      } finally {
        await admin.end();
      }
    } finally {
      await dispatch.stop();
    }
  });

  it("the runtime role also starts when migrations are on: a database already up to date is only read", async () => {
    const dispatch = await startTestService({ databaseUrl: app.urlFor(database.url), migrate: true });
    await dispatch.stop();
  });

  it("DISPATCH_MIGRATE=false on a schema behind this build stops with one line saying to run dispatch migrate", async () => {
    // The last migration's record goes away for this test, and comes back after it.
    const admin = createSql(database.url, 1);
    const [last] = await admin`
      delete from dispatch.__drizzle_migrations where id = (select max(id) from dispatch.__drizzle_migrations) returning *`;
    try {
      const result = await runDispatch(["start"], { DATABASE_URL: app.urlFor(database.url), DISPATCH_MIGRATE: "false", PORT: "0", HOST: "127.0.0.1" });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        `dispatch: the database's schema is behind this build and DISPATCH_MIGRATE=false: run "dispatch migrate" as a role that may create in the database (README "Database privileges"), then start again`,
      );
    } finally {
      await admin`insert into dispatch.__drizzle_migrations ${admin(last!)}`;
      await admin.end();
    }
  });
});
