/**
 * The metrics that say something is wrong before users do: how long due
 * messages have waited unclaimed (an API process with no worker behind it),
 * how far past its removal the oldest expired message is (retention falling
 * behind), and that the scrape reached the database (`dispatch_database_up`;
 * test/metrics-database-down.test.ts: when it cannot).
 */
import { expect, it } from "vitest";
import { seriesValue } from "./support/metrics-text";
import { poll } from "./support/poll";
import { useProject } from "./support/projects";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

/** An API process alone: what it accepts waits, due, for a worker that never comes. */
const dispatch = useDispatch({}, { role: "api" });
const receiver = useReceiver();

/** The value of `name{project="default"}` in a scrape, or undefined. */
const defaultProject = (text: string, name: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{project="default"} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
};
const scrape = async () => (await dispatch.api("/metrics")).text();

it("says how long due messages have waited with no worker to claim them", async () => {
  expect(defaultProject(await scrape(), "dispatch_messages_overdue_seconds")).toBe(0);
  const published = await dispatch.api(`/v2/publish/${receiver.url}/waits`, { method: "POST", body: "x" });
  expect(published.status).toBe(200);
  await poll(async () => (defaultProject(await scrape(), "dispatch_messages_overdue_seconds") ?? 0) > 0, "the due message counted as overdue");
  expect(await scrape()).toMatch(/^dispatch_database_up 1$/m);
});

const paused = useProject(dispatch, "paused");

it("leaves out the messages of a paused queue, which wait on purpose", async () => {
  const overdue = async () => seriesValue(await scrape(), "dispatch_messages_overdue_seconds", { project: "paused" }) ?? 0;
  const queue = { method: "POST", body: JSON.stringify({ queueName: "held", parallelism: 1 }) };
  expect((await paused.api("/v2/queues", queue)).status).toBe(200);
  expect((await paused.api(`/v2/enqueue/held/${receiver.url}/held`, { method: "POST", body: "x" })).status).toBe(200);
  await poll(async () => (await overdue()) > 0, "the started message of the queue counted as overdue");
  expect((await paused.api("/v2/queues/held/pause", { method: "POST" })).status).toBe(200);
  await poll(async () => (await overdue()) === 0, "the paused queue's message no longer counted");
});

it("says how far past its removal the oldest expired finished message is", async () => {
  expect(defaultProject(await scrape(), "dispatch_retention_overdue_seconds")).toBe(0);
  const published = await dispatch.api(`/v2/publish/${receiver.url}/expired`, { method: "POST", body: "x" });
  const { messageId } = await published.json();
  // Delivered 40 days ago; retention keeps finished messages 14 days (DISPATCH_RETENTION), and no worker removes it here.
  await dispatch.service.sql`
    update dispatch.messages set state = 'DELIVERED', due_at = null, created_at = now() - interval '40 days', completed_at = now() - interval '40 days'
    where id = ${messageId}`;
  // A scrape's read serves the scrapes of the next 100 ms: poll past it.
  const overdue = await poll(async () => {
    const seconds = defaultProject(await scrape(), "dispatch_retention_overdue_seconds") ?? 0;
    return seconds > 0 && seconds;
  }, "the expired message counted");
  const days = overdue / 86_400;
  expect(days).toBeGreaterThan(25.99);
  expect(days).toBeLessThan(26.01);
});
