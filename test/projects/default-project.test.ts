/**
 * The default project: a database of the version before projects upgrades
 * with everything it held in the project `default`, and a single-team
 * Dispatch keeps working with its tokens as before, never naming a project.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { tokenDigest } from "../../src/domain/access-tokens/access-tokens";
import { databaseMigratedUpTo } from "../support/migrations";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { request, startTestService, type TestService } from "../support/service";

/** The last migration before projects. */
const BEFORE = "0020_access_token_uses";
/** A token an operator made with `dispatch token create` before the upgrade. */
const MADE_TOKEN = "made-before-projects-0123456789abcdef";
const TABLES = ["access_tokens", "queues", "url_groups", "url_group_endpoints", "flow_control_keys", "schedules", "messages"];

const receiver = useReceiver();
let dispatch: TestService;

beforeAll(async () => {
  const databaseUrl = await databaseMigratedUpTo(BEFORE);
  const sql = createSql(databaseUrl, 1);
  await sql`insert into dispatch.access_tokens (name, digest, read_only) values ('ci', ${tokenDigest(MADE_TOKEN)}, false)`;
  await sql`insert into dispatch.queues (name, parallelism, paused) values ('orders', 1, true)`;
  await sql`insert into dispatch.url_groups (name) values ('team')`;
  await sql`insert into dispatch.url_group_endpoints (group_name, url) values ('team', ${`${receiver.url}/team`})`;
  await sql`insert into dispatch.flow_control_keys (key, parallelism) values ('k', 2)`;
  await sql`
    insert into dispatch.schedules (id, cron, destination, dialect, headers, body, next_tick_at)
    values ('nightly', '0 3 * * *', ${`${receiver.url}/nightly`}, 'svc', '{}', ${Buffer.from("tick")}, now() + interval '1 day')`;
  await sql.end();
  dispatch = await startTestService({}, { databaseUrl });
});
afterAll(async () => {
  await dispatch?.stop();
});

it("holds all that was there in the project default, and nothing in any other", async () => {
  const db = dispatch.service.sql;
  expect(await db`select name from dispatch.projects`).toEqual([{ name: "default" }]);
  for (const table of TABLES) {
    const projects = await db.unsafe(`select distinct project from dispatch.${table}`);
    expect(projects, table).toEqual(table === "messages" ? [] : [{ project: "default" }]);
  }
});

it("serves a token made before the upgrade, which sees and uses what was there", async () => {
  const api = (path: string, init: RequestInit = {}) =>
    request(`${dispatch.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${MADE_TOKEN}`, ...(init.headers as Record<string, string>) } });
  expect((await (await api("/v2/queues/orders")).json()).paused).toBe(true);
  expect((await (await api("/v2/schedules/nightly")).json()).cron).toBe("0 3 * * *");
  const published = await api("/v2/publish/team", { method: "POST", body: "to the group" });
  expect(published.status).toBe(200);
  const [arrived] = await receiver.waitFor(1);
  expect(arrived!.path).toBe("/team");
  const db = dispatch.service.sql;
  await poll(async () => (await db`select state from dispatch.messages where state = 'DELIVERED'`).length === 1, "the message to be delivered");
  expect(await db`select distinct project from dispatch.messages`).toEqual([{ project: "default" }]);
});
