/**
 * Moving a running deployment onto Citus (README "Past one primary"): a
 * database that served Dispatch as one server (delivered, waiting and
 * dead-lettered messages in it) gets the `citus` extension and its workers,
 * and `dispatch migrate` distributes it as it stands. Nothing is lost, the
 * rows written before attempts carried their project get it, and a service
 * started on it goes on: the waiting message is there to cancel, the DLQ
 * entry to retry, and a new message is delivered.
 */
import { randomBytes } from "node:crypto";
import { afterEach, expect, inject, it } from "vitest";
import { isDistributed } from "../../src/db/citus/layout";
import { createSql } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { TEST_DATABASE_PREFIX } from "../support/global-setup";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { startTestService, type TestService } from "../support/service";
import { joinWorkers, makeDatabaseOnEveryNode } from "./support/cluster";

const receiver = useReceiver();
const services: TestService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.stop();
});

async function start(databaseUrl: string): Promise<TestService> {
  const service = await startTestService({}, { databaseUrl });
  services.push(service);
  return service;
}

it("distributes a database that served Dispatch as one server, and the service goes on with what it held", async () => {
  const [adminUrl, workers] = [inject("adminUrl"), inject("citusWorkers")];
  const name = `${TEST_DATABASE_PREFIX}moved_${randomBytes(4).toString("hex")}`;
  const databaseUrl = await makeDatabaseOnEveryNode(adminUrl, workers, name, false);
  expect(await migrate(databaseUrl)).toBe(false);

  // One server's life: a delivered message, one waiting an hour, one dead-lettered.
  const before = await start(databaseUrl);
  const publish = (service: TestService, url: string, headers: Record<string, string> = {}) =>
    service.api(`/v2/publish/${url}`, { method: "POST", headers, body: "moved" }).then((r) => r.json());
  const delivered = (await publish(before, `${receiver.url}/before`)).messageId as string;
  const waiting = (await publish(before, `${receiver.url}/later`, { "Svc-Delay": "1h" })).messageId as string;
  const dead = (await publish(before, "http://127.0.0.1:9/dead", { "Svc-Retries": "0" })).messageId as string;
  const state = (service: TestService, id: string) =>
    service.service.sql<{ state: string }[]>`select state from dispatch.messages where id = ${id}`.then((rows) => rows[0]?.state);
  await poll(async () => (await state(before, delivered)) === "DELIVERED" && (await state(before, dead)) === "FAILED", "one server's deliveries");
  services.splice(services.indexOf(before), 1);
  await before.stop();
  // As an earlier version wrote them: attempts without their project.
  const plain = createSql(databaseUrl, 1);
  await plain`update dispatch.attempts set project = null`;
  const counts = () => plain<{ messages: number; attempts: number; dlq: number }[]>`
    select (select count(*)::int from dispatch.messages) as messages, (select count(*)::int from dispatch.attempts) as attempts,
      (select count(*)::int from dispatch.dlq) as dlq`;
  const held = (await counts())[0]!;
  await plain.end();

  await joinWorkers(adminUrl, workers, name);
  expect(await migrate(databaseUrl)).toBe(true);
  const sql = createSql(databaseUrl, 1);
  try {
    expect(await isDistributed(sql)).toBe(true);
    expect((await sql<typeof held[]>`
      select (select count(*)::int from dispatch.messages) as messages, (select count(*)::int from dispatch.attempts) as attempts,
        (select count(*)::int from dispatch.dlq) as dlq`)[0]).toEqual(held);
    expect(await sql`select 1 from dispatch.attempts where project is distinct from 'default'`).toHaveLength(0);
  } finally {
    await sql.end();
  }

  const after = await start(databaseUrl);
  expect((await (await after.api(`/v2/messages/${waiting}`)).json()).state).toBe("CREATED");
  expect((await (await after.api(`/v2/messages/${waiting}`, { method: "DELETE" })).json()).cancelled).toBe(1);
  const [entry] = (await (await after.api("/v2/dlq")).json()).messages as { dlqId: string; messageId: string }[];
  expect(entry?.messageId).toBe(dead);
  expect((await after.api(`/v2/dlq/retry/${entry!.dlqId}`, { method: "POST" })).status).toBe(201);
  await publish(after, `${receiver.url}/after`);
  await receiver.waitFor(2);
  expect(receiver.requests.map((request) => request.path).sort()).toEqual(["/after", "/before"]);
});
