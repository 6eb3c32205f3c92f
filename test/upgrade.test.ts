/**
 * Upgrading a database written by the engine before the attempt log and the
 * claim (migrations up to 0004): a message waiting as a graphile-worker job is
 * delivered after the upgrade, nothing is left in graphile-worker's queue, and
 * the event log of old and new messages reads in order, legacy events first.
 */
import { afterEach, beforeAll, expect, it } from "vitest";
import { createSql, type Sql } from "../src/db/client";
import { databaseMigratedUpTo } from "./support/migrations";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { startTestService, type TestService } from "./support/service";

/** The last migration of the graphile-worker engine with an event table. */
const BEFORE = "0004_leaner_indexes";

let databaseUrl: string;
const receiver = useReceiver();
let dispatch: TestService | undefined;

beforeAll(async () => {
  databaseUrl = await databaseMigratedUpTo(BEFORE);
});
afterEach(async () => {
  await dispatch?.stop();
  dispatch = undefined;
});

/** Writes what the old engine wrote for a message: its row, its events, and for a pending one a deliver job. */
async function writeOldMessage(sql: Sql, id: string, url: string, delivered: boolean): Promise<void> {
  await sql`
    insert into dispatch.messages (id, dialect, state, url, method, headers, body, max_retries, not_before,
      next_delivery_at, job_scheduled, completed_at)
    values (${id}, 'svc', ${delivered ? "DELIVERED" : "CREATED"}, ${url}, 'POST', '{}', ${Buffer.from(`old ${id}`)}, 3,
      now(), now(), ${!delivered}, ${delivered ? new Date() : null})`;
  const states = delivered ? ["CREATED", "ACTIVE", "DELIVERED"] : ["CREATED"];
  for (const state of states) await sql`insert into dispatch.message_events (message_id, state) values (${id}, ${state})`;
  if (!delivered) await sql`select graphile_worker.add_job('deliver', json_build_object('id', ${id}::text))`;
}

it("delivers what the old engine held and keeps the old events in the log", async () => {
  const sql = createSql(databaseUrl, 1);
  await writeOldMessage(sql, "msg_old_delivered", `${receiver.url}/old-delivered`, true);
  await writeOldMessage(sql, "msg_old_pending", `${receiver.url}/old-pending`, false);
  await sql.end();

  dispatch = await startTestService({}, { databaseUrl });
  const fresh = await dispatch.api(`/v2/publish/${receiver.url}/new`, { method: "POST", body: "new" });
  const freshId = ((await fresh.json()) as { messageId: string }).messageId;
  const arrived = await receiver.waitFor(2, 20_000);
  expect(arrived.map((request) => request.path).sort()).toEqual(["/new", "/old-pending"]);
  expect(arrived.find((request) => request.path === "/old-pending")!.body.toString()).toBe("old msg_old_pending");

  const db = dispatch.service.sql;
  const [jobs] = await db<{ count: number }[]>`
    select count(*)::int as count from graphile_worker.jobs where task_identifier = 'deliver'`;
  expect(jobs!.count).toBe(0);
  const states = async (id: string) => {
    const response = await dispatch!.api(`/v2/events?messageId=${id}&order=earliestFirst`);
    return ((await response.json()) as { events: { state: string; time: number }[] }).events.map((event) => event.state);
  };
  // Arrived is not yet recorded: wait for both outcomes before reading the logs.
  await poll(async () => (await states("msg_old_pending")).length >= 3, "the old pending message to finish");
  await poll(async () => (await states(freshId)).length >= 3, "the new message to finish");
  expect(await states("msg_old_delivered")).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
  expect(await states("msg_old_pending")).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
  expect(await states(freshId)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);

  // The whole log, oldest first: the legacy events come first, every event once, and in SQL the same.
  const all = (await (await dispatch.api(`/v2/events?order=earliestFirst&count=100`)).json()) as {
    events: { messageId: string; state: string }[];
  };
  expect(all.events.slice(0, 4).map((event) => `${event.messageId} ${event.state}`)).toEqual([
    "msg_old_delivered CREATED",
    "msg_old_delivered ACTIVE",
    "msg_old_delivered DELIVERED",
    "msg_old_pending CREATED",
  ]);
  expect(all.events).toHaveLength(9);
  const [view] = await db<{ count: number }[]>`select count(*)::int as count from dispatch.message_events`;
  expect(view!.count).toBe(9);
  // What was there before projects belongs to the default one, as does what came after with a token of it.
  expect(await db`select distinct project from dispatch.messages`).toEqual([{ project: "default" }]);
}, 60_000);
