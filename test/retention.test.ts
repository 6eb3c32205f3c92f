/**
 * Retention removes what finished long enough ago — messages with their
 * attempts and log, DLQ entries, finished workflow runs with their steps and
 * messages — and nothing unfinished; a message stays while its DLQ entry does.
 * Rows are aged in the database instead of waiting days.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeExpired } from "../src/worker/maintenance/retention";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";
import { startWorkflowApp, type WorkflowApp } from "./support/workflow-app";

const dispatch = useDispatch();
const receiver = useReceiver();
let app: WorkflowApp;
const DAY = 86_400_000;
const retention = { messagesMs: 14 * DAY, dlqMs: 30 * DAY, workflowRunsMs: 14 * DAY };

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/done": { route: async (context) => void (await context.run("only", () => 1)) },
    "/sleeping": { route: async (context) => context.sleep("long", 3600) },
  });
});
afterAll(async () => {
  await app.close();
});

const sql = () => dispatch.service.sql;
async function publish(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${url}`, { method: "POST", headers, body: "x" });
  return (await response.json()).messageId;
}
const stateOf = async (id: string) =>
  (await sql()<{ state: string }[]>`select state from dispatch.messages where id = ${id}`)[0]?.state ?? "removed";
const finished = (id: string) => poll(async () => ["DELIVERED", "FAILED", "CANCELED"].includes(await stateOf(id)), `${id} to finish`);
/**
 * Makes every message, attempt, DLQ entry and run look `days` older: each row's times read, moved back and
 * written by key (on Citus an update may not compute a time from a column: `timestamptz - interval` is stable).
 */
async function age(days: number, table: "messages" | "dlq" | "workflow_runs") {
  const back = (at: Date | null) => (at === null ? null : new Date(at.getTime() - days * 86_400_000));
  const key = { messages: "id", dlq: "dlq_id", workflow_runs: "pk" }[table];
  const completed = table === "dlq" ? sql()`null::timestamptz` : sql()`completed_at`;
  const rows = await sql()<{ project: string; key: string; createdAt: Date; completedAt: Date | null }[]>`
    select project, ${sql()(key)}::text as key, created_at as "createdAt", ${completed} as "completedAt" from ${sql()(`dispatch.${table}`)}`;
  for (const row of rows) {
    const times = table === "dlq" ? { created_at: back(row.createdAt) } : { created_at: back(row.createdAt), completed_at: back(row.completedAt) };
    await sql()`update ${sql()(`dispatch.${table}`)} set ${sql()(times)} where project = ${row.project} and ${sql()(key)}::text = ${row.key}`;
  }
}

describe("retention", () => {
  it("removes finished messages, then DLQ entries and their messages, then finished runs; never what is pending", async () => {
    const delivered = await publish(`${receiver.url}/ok`);
    const cancelled = await publish(`${receiver.url}/later`, { "Svc-Delay": "1h" });
    await dispatch.api(`/v2/messages/${cancelled}`, { method: "DELETE" });
    const dead = await publish("http://127.0.0.1:9/dead", { "Svc-Retries": "0" });
    const pending = await publish(`${receiver.url}/pending`, { "Svc-Delay": "1h" });
    const { workflowRunId: done } = await app.client.trigger({ url: app.url("/done") });
    const { workflowRunId: sleeping } = await app.client.trigger({ url: app.url("/sleeping") });
    await Promise.all([delivered, cancelled, dead].map(finished));
    const runState = async (runId: string) =>
      (await sql()<{ state: string }[]>`select state from dispatch.workflow_runs where run_id = ${runId}`)[0]?.state ?? "removed";
    await poll(async () => (await runState(done)) === "RUN_SUCCESS", "the run to finish");
    // The run can succeed before the delivery that told it so is recorded; retention keeps a run while any message is pending.
    await poll(async () => (await sql()`select 1 from dispatch.messages m join dispatch.workflow_runs r on r.project = m.project and r.pk = m.workflow_run_pk
      where r.run_id = ${done} and m.completed_at is null`).length === 0, "the run's messages to finish");
    await poll(async () => (await sql()`select 1 from dispatch.workflow_steps s join dispatch.workflow_runs r on r.project = s.project and r.pk = s.run_pk
      where r.run_id = ${sleeping} and s.call_type = 'step'`).length > 0 || undefined, "the sleeping run to sleep");

    // Nothing is old enough yet.
    expect(await removeExpired(sql(), retention)).toEqual({ messages: 0, dlq: 0, workflowRuns: 0 });

    await age(20, "messages");
    await age(20, "workflow_runs");
    await age(20, "dlq");
    const first = await removeExpired(sql(), retention);
    expect(first).toMatchObject({ dlq: 0, workflowRuns: 1 });
    expect(await stateOf(delivered)).toBe("removed");
    expect(await stateOf(cancelled)).toBe("removed");
    expect(await sql()`select 1 from dispatch.attempts where message_id = ${delivered}`).toEqual([]);
    const events = await (await dispatch.api(`/v2/events?messageId=${delivered}`)).json();
    expect(events.events).toEqual([]);
    // In the DLQ (20 days of 30): kept. Pending: kept. The finished run went with its messages; the sleeping one stays.
    expect(await stateOf(dead)).toBe("FAILED");
    expect(await stateOf(pending)).toBe("CREATED");
    expect(await runState(done)).toBe("removed");
    expect(await runState(sleeping)).toBe("RUN_STARTED");
    expect(await sql()`select 1 from dispatch.messages m join dispatch.workflow_runs r on r.project = m.project and r.pk = m.workflow_run_pk
      where r.run_id = ${sleeping}`).not.toEqual([]);

    await age(20, "dlq");
    const second = await removeExpired(sql(), retention);
    expect(second).toMatchObject({ dlq: 1, messages: 1, workflowRuns: 0 });
    expect(await stateOf(dead)).toBe("removed");
    expect(await stateOf(pending)).toBe("CREATED");
    expect((await dispatch.api(`/v2/messages/${pending}`)).status).toBe(200);
  });

  it("a removal within its budget stops between batches and finishes on the next run", async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => publish(`${receiver.url}/many`)));
    await Promise.all(ids.map(finished));
    await age(30, "messages");
    expect(await removeExpired(sql(), retention, { budgetMs: 0 })).toEqual({ messages: 0, dlq: 0, workflowRuns: 0 });
    expect((await removeExpired(sql(), retention)).messages).toBeGreaterThanOrEqual(5);
    for (const id of ids) expect(await stateOf(id)).toBe("removed");
  });

  it("a removal stops between two batches when its signal aborts (a stopping worker), however long its rest", async () => {
    // 2,500 delivered messages that finished 40 days ago: more than two batches.
    await sql()`
      insert into dispatch.messages (id, dialect, state, url, method, headers, body, max_retries, not_before,
        next_delivery_at, created_at, completed_at)
      select 'msg_aborted_' || lpad(g::text, 10, '0'), 'svc', 'DELIVERED', 'http://127.0.0.1:9/old', 'POST', '{}',
        convert_to('x', 'UTF8'), 3, now() - interval '40 days', now() - interval '40 days',
        now() - interval '40 days', now() - interval '40 days'
      from generate_series(1, 2500) g`;
    const left = async () => (await sql()<{ n: number }[]>`
      select count(*)::int as n from dispatch.messages where id like 'msg_aborted_%'`)[0]!.n;
    const stop = new AbortController();
    // Working a thousandth of the time, the rest after the first batch would outlast the test.
    const removing = removeExpired(sql(), retention, { duty: 0.001, signal: stop.signal });
    await poll(async () => (await left()) === 1500, "the first batch to be removed");
    stop.abort();
    expect(await removing).toEqual({ messages: 1000, dlq: 0, workflowRuns: 0 });
    expect(await left()).toBe(1500);
  });
});
