/**
 * Health without a token: `/health/live` says the process answers;
 * `/health/ready` says it can work — database, migrations, and the heartbeat
 * of the worker it runs — with each check reported.
 */
import { describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { startTestService, useDispatch } from "./support/service";

const dispatch = useDispatch();
const get = async (path: string) => {
  const response = await fetch(`${dispatch.baseUrl}${path}`);
  return { status: response.status, body: await response.json() };
};

describe("health", () => {
  it("live answers while the process runs", async () => {
    expect(await get("/health/live")).toEqual({ status: 200, body: { status: "ok" } });
  });

  it("ready reports the database, the migrations and the worker's heartbeat", async () => {
    expect(await get("/health/ready")).toEqual({
      status: 200,
      body: { status: "ok", checks: { database: "up", migrations: "current", worker: "fresh" } },
    });
  });

  it("is not ready while the database holds a migration this build does not know", async () => {
    const sql = dispatch.service.sql;
    await sql`insert into dispatch.__drizzle_migrations (hash, created_at) values ('from-a-newer-build', 9999999999999)`;
    try {
      expect(await get("/health/ready")).toMatchObject({ status: 503, body: { status: "unavailable", checks: { migrations: "ahead" } } });
    } finally {
      await sql`delete from dispatch.__drizzle_migrations where hash = 'from-a-newer-build'`;
    }
    expect((await get("/health/ready")).status).toBe(200);
  });

  it("is not ready while its worker's heartbeat is stale, and ready again once it beats", async () => {
    // The worker beats on: a beat landing between the update and the request makes it fresh again, so stale it anew until read.
    const stale = await poll(async () => {
      await dispatch.service.sql`update dispatch.workers set heartbeat_at = now() - interval '1 hour' where id like '%:claims'`;
      const answer = await get("/health/ready");
      return answer.status === 503 && answer;
    }, "a readiness answer while the heartbeat is stale");
    expect(stale).toMatchObject({ status: 503, body: { checks: { worker: "stale", database: "up" } } });
    await poll(async () => (await get("/health/ready")).status === 200, "the next heartbeat");
  });

  it("an API-only process has no worker to check", async () => {
    const api = await startTestService({}, { role: "api", databaseUrl: dispatch.service.databaseUrl });
    try {
      const response = await fetch(`${api.baseUrl}/health/ready`);
      expect(await response.json()).toEqual({ status: "ok", checks: { database: "up", migrations: "current", worker: "none" } });
    } finally {
      await api.stop();
    }
  });
});
