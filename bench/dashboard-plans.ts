/**
 * `npx tsx bench/dashboard-plans.ts`: the query plans of the dashboard's
 * pages on a database holding 1,000,000 messages (docs/dashboard.md lists
 * them). Seeds a fresh database (embedded Postgres, or a server named by
 * `DATABASE_URL`) with messages spread over 14 days in every state, their
 * attempts interleaved with them in time as the engine writes them, DLQ
 * entries for the failed ones, workflow runs, and 100,000 each of queues,
 * URL groups (two endpoints each), schedules and flow-control keys (the lists
 * the dashboard pages by name); then calls each page's domain functions,
 * captures their SQL, and prints `EXPLAIN ANALYZE` of each: the scans it uses
 * and its time.
 */
import postgres from "postgres";
import { listDlq, findDlqEntry } from "../src/domain/dlq/dlq";
import { recentRetries, retryLinks } from "../src/domain/dlq/retry-links";
import { keyStatePage } from "../src/domain/flow-control/keys";
import { listAttempts, messageRelations } from "../src/domain/messages/attempts";
import { listMessages } from "../src/domain/messages/list";
import { Redactor } from "../src/domain/messages/redaction";
import { findMessage } from "../src/domain/messages/message";
import { retryNow } from "../src/domain/messages/retry-now";
import { holdOf } from "../src/domain/messages/hold";
import { lastHour } from "../src/domain/overview/activity";
import { failingNow } from "../src/domain/overview/failing-now";
import { countByState } from "../src/domain/overview/state-counts";
import { readTotals } from "../src/domain/overview/totals";
import { queuePage } from "../src/domain/queues/queues";
import { getSchedule, schedulePage, scheduleStates } from "../src/domain/schedules/schedules";
import { urlGroupPage } from "../src/domain/url-groups/url-groups";
import { listRunLogs } from "../src/domain/workflows/logs/logs";
import { listWaiters } from "../src/domain/workflows/waits";
import { readRunDetail } from "../src/domain/workflows/logs/run-detail";
import { migrate } from "../src/db/migrate";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";
import { startDatabaseServer } from "./database";

const MESSAGES = Number(process.env.PLAN_MESSAGES ?? 1_000_000);
/** Rows of each list the dashboard pages by name. */
const LISTED = Number(process.env.PLAN_LISTED ?? 100_000);
/** The `n`th row of such a list, named as the seed names them (`tenant-000042`). */
const nth = (prefix: string, n: number) => `${prefix}-${String(n).padStart(6, "0")}`;
const types = { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: Number } };

const server = await startDatabaseServer(process.env.DATABASE_URL);
try {
  const url = await server.createDatabase("plans");
  await migrate(url);
  const admin = postgres(url, { max: 1, onnotice: () => {}, types });
  const started = Date.now();
  await seed(admin);
  await seedLists(admin);
  await admin`vacuum analyze`;
  console.error(`seeded ${MESSAGES} messages and ${LISTED} of each list in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await explainPages(url, admin);
  await admin.end();
} finally {
  await server.stop();
}

async function seed(sql: postgres.Sql): Promise<void> {
  await sql`set synchronous_commit = off`;
  // Message i (oldest first, 1.2 s apart) has seq 2i and its attempt id 2i+1, as the engine interleaves them.
  await sql`
    insert into dispatch.messages (id, seq, dialect, state, url, topic_name, queue_name, method, headers, body,
      max_retries, retried, labels, not_before, next_delivery_at, due_at, created_at, completed_at)
    overriding system value
    select 'msg_' || lpad(i::text, 12, '0'), 2 * i, 'svc', s.state,
      'https://api.example.com/hook/' || (i % 100), case when i % 10 = 1 then 'group-' || (i % 7) end,
      case when i % 10 = 2 then 'queue-' || (i % 5) end, 'POST', '{}', convert_to('{"n":' || i || '}', 'UTF8'),
      3, case when s.state in ('FAILED', 'RETRY') then 3 else 0 end,
      case when i % 5 = 0 then array['label-' || (i % 20)] end,
      t.at, t.at + interval '1 second', case when s.state in ('CREATED', 'RETRY') then now() + interval '1 day' end,
      t.at, case when s.state in ('DELIVERED', 'FAILED', 'CANCELED') then t.at + interval '1 second' end
    from generate_series(1, ${MESSAGES}) i,
      lateral (select now() - (${MESSAGES} - i) * interval '1.2 seconds' as at) t,
      lateral (select case when i % 100 < 90 then 'DELIVERED' when i % 100 < 95 then 'FAILED'
        when i % 100 < 97 then 'CANCELED' when i % 100 < 99 then 'CREATED' else 'RETRY' end as state) s`;
  await sql`
    insert into dispatch.attempts (id, message_id, retried, started_at, duration_ms, recorded_at, result, response_status,
      failure, response_body)
    select m.seq + 1, m.id, m.retried, m.created_at, 20, m.completed_at,
      case when m.state = 'DELIVERED' then 'DELIVERED' else 'ERROR' end,
      case when m.state = 'DELIVERED' then 200 else 500 end, case when m.state = 'FAILED' then 'HTTP 500' end,
      case when m.state = 'FAILED' then convert_to('{"error":"receiver is down"}', 'UTF8') end
    from dispatch.messages m where m.state in ('DELIVERED', 'FAILED')`;
  await sql`select setval('dispatch.messages_seq_seq', ${2 * MESSAGES + 2})`;
  // One failed message in 500 was retried from the DLQ, as the message after it (retry-links.ts).
  await sql`
    update dispatch.messages o set retried_as = r.id, retried_at = r.created_at
    from dispatch.messages r where o.state = 'FAILED' and o.seq / 2 % 500 = 90 and r.seq = o.seq + 2`;
  await sql`
    insert into dispatch.dlq (dlq_id, message_id, created_at, error, response_status)
    select 'dlq_' || substr(m.id, 5), m.id, m.completed_at, 'HTTP 500', 500 from dispatch.messages m where m.state = 'FAILED'`;
  await sql`insert into dispatch.queues (name, parallelism) select 'queue-' || i, 2 from generate_series(0, 4) i`;
  await sql`insert into dispatch.url_groups (name) select 'group-' || i from generate_series(0, 6) i`;
  await sql`
    insert into dispatch.url_group_endpoints (group_name, url) select 'group-' || i, 'https://api.example.com/e/' || i
    from generate_series(0, 6) i`;
  await sql`
    insert into dispatch.workflow_runs (run_id, workflow_url, dialect, state, created_at, completed_at, config, user_headers)
    select 'wfr_' || i, 'https://app.example.com/flow', 'upstash', case when i % 10 = 0 then 'RUN_STARTED' else 'RUN_SUCCESS' end,
      now() - i * interval '1 minute', case when i % 10 <> 0 then now() - i * interval '1 minute' end, '{}', '{}'
    from generate_series(1, 20000) i`;
}

/**
 * The lists the dashboard pages by name, `LISTED` rows each: queues, URL
 * groups with two endpoints, schedules whose last tick made one of the
 * messages, and flow-control keys, one in ten messages carrying one of them.
 */
async function seedLists(sql: postgres.Sql): Promise<void> {
  const rows = sql`generate_series(1, ${LISTED}) i`;
  const name = (prefix: string) => sql`${prefix} || '-' || lpad(i::text, 6, '0')`;
  await sql`insert into dispatch.queues (name, parallelism, paused) select ${name("q")}, 2, i % 50 = 0 from ${rows}`;
  await sql`insert into dispatch.url_groups (name) select ${name("team")} from ${rows}`;
  await sql`
    insert into dispatch.url_group_endpoints (group_name, url, name)
    select ${name("team")}, 'https://' || ${name("team")} || '.example.com/' || e, case when e = 1 then 'primary' end
    from ${rows}, generate_series(1, 2) e`;
  await sql`
    insert into dispatch.schedules (id, cron, destination, dialect, headers, body, next_tick_at, last_tick_at, last_message_ids)
    select ${name("schedule")}, '*/5 * * * *', 'https://api.example.com/cron/' || i, 'svc', '{}', '', now() + interval '5 minutes',
      now(), array['msg_' || lpad((${MESSAGES} - i % ${MESSAGES})::text, 12, '0')]
    from ${rows}`;
  await sql`insert into dispatch.flow_control_keys (key, parallelism, rate) select ${name("tenant")}, 4, 100 from ${rows}`;
  await sql`
    update dispatch.messages set flow_control_key = 'tenant-' || lpad((seq / 20 % ${LISTED} + 1)::text, 6, '0')
    where seq / 2 % 10 = 3`;
  // Some pending messages wait in their queues (queue-0 is paused), others are held back by their keys.
  await sql`update dispatch.queues set paused = true where name = 'queue-0'`;
  await sql`
    update dispatch.messages set queue_name = q, pending_queue = q, due_at = null
    from (values ('queue-0', 0), ('queue-2', 1)) as v(q, half)
    where state = 'CREATED' and seq / 2 % 100 = 97 and seq / 200 % 2 = half`;
  await sql`
    update dispatch.messages set flow_control_key = 'tenant-' || lpad((seq / 20 % ${LISTED} + 1)::text, 6, '0'),
      flow_parked = true, due_at = null
    where state = 'CREATED' and seq / 2 % 100 = 98`;
}

/** Each page's domain calls, with the SQL they send captured, then explained. */
async function explainPages(url: string, admin: postgres.Sql): Promise<void> {
  const captured: { query: string; params: unknown[] }[] = [];
  const sql = postgres(url, { max: 1, onnotice: () => {}, types, debug: (_, query, params) => void captured.push({ query, params: params as unknown[] }) });
  const redactor = new Redactor(Buffer.alloc(32));
  const someId = `msg_${String(Math.floor(MESSAGES / 2) - 45).padStart(12, "0")}`;
  const latest = await listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: {}, range: { fromDate: null, toDate: null }, cursor: null, count: 50 });
  const pick = async (where: postgres.Fragment) => (await findMessage(sql, (await admin`select id from dispatch.messages where ${where} limit 1`)[0]!.id))!;
  const held = {
    backoff: await pick(admin`state = 'RETRY' and due_at is not null`),
    queued: await pick(admin`pending_queue = 'queue-2'`),
    paused: await pick(admin`pending_queue = 'queue-0'`),
    keyed: await pick(admin`flow_parked`),
    retried: await pick(admin`retried_as is not null`),
  };
  const retry = (await findMessage(sql, held.retried.retriedAs!))!;
  const pages: [string, () => Promise<unknown>][] = [
    ["overview: messages by state", () => countByState(sql, "messages", DEFAULT_PROJECT)],
    ["overview: runs by state", () => countByState(sql, "workflow_runs", DEFAULT_PROJECT)],
    ["overview: last hour", () => lastHour(sql, DEFAULT_PROJECT)],
    ["overview: totals", () => readTotals(sql, DEFAULT_PROJECT)],
    ["messages: newest", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: {}, range: { fromDate: null, toDate: null }, cursor: null, count: 50 })],
    ["messages: next page", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: {}, range: { fromDate: null, toDate: null }, cursor: latest.cursor, count: 50 })],
    ["messages: state FAILED", () => listMessages(sql, { project: DEFAULT_PROJECT, states: ["FAILED"], filter: {}, range: { fromDate: null, toDate: null }, cursor: null, count: 50 })],
    ["messages: state RETRY, URL", () => listMessages(sql, { project: DEFAULT_PROJECT, states: ["RETRY"], filter: { url: ["https://api.example.com/hook/99"] }, range: { fromDate: null, toDate: null }, cursor: null, count: 50 })],
    ["messages: queue", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: { queueName: ["queue-2"] }, range: { fromDate: null, toDate: null }, cursor: null, count: 50 })],
    ["messages: label, last 24 h", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: { label: ["label-5"] }, range: { fromDate: Date.now() - 86_400_000, toDate: null }, cursor: null, count: 50 })],
    ["messages: a day a week ago", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: {}, range: { fromDate: Date.now() - 8 * 86_400_000, toDate: Date.now() - 7 * 86_400_000 }, cursor: null, count: 50 })],
    ["message: the message", () => findMessage(sql, someId)],
    ["message: attempts", () => listAttempts(sql, someId)],
    ["message: relations", () => messageRelations(sql, { id: someId, project: DEFAULT_PROJECT, workflowRunPk: null })],
    ["message: why it waits, retry backoff", () => holdOf(sql, held.backoff)],
    ["message: why it waits, behind its queue", () => holdOf(sql, held.queued)],
    ["message: why it waits, paused queue", () => holdOf(sql, held.paused)],
    ["message: why it waits, held by its key", () => holdOf(sql, held.keyed)],
    ["message: retried as", () => retryLinks(sql, held.retried)],
    ["message: retry of", () => retryLinks(sql, retry)],
    ["messages: flow-control key", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: { flowControlKey: [nth("tenant", 42)] }, range: { fromDate: null, toDate: null }, cursor: null, count: 50 })],
    ["overview: failing now", () => failingNow(sql, DEFAULT_PROJECT, 5)],
    ["dlq: recent retries", () => recentRetries(sql, DEFAULT_PROJECT, 10)],
    ["dlq: newest", () => listDlq(sql, { project: DEFAULT_PROJECT, filter: {}, responseStatus: null, range: { fromDate: null, toDate: null } }, { cursor: null, count: 50, order: "latestFirst" })],
    ["dlq: URL", () => listDlq(sql, { project: DEFAULT_PROJECT, filter: { url: ["https://api.example.com/hook/96"] }, responseStatus: null, range: { fromDate: null, toDate: null } }, { cursor: null, count: 50, order: "latestFirst" })],
    ["dlq: entry", () => findDlqEntry(sql, DEFAULT_PROJECT, `dlq_${String(91).padStart(12, "0")}`)],
    ["queues: first page", () => queuePage(sql, DEFAULT_PROJECT, { cursor: null, count: 50 })],
    ["queues: a page in the middle", () => queuePage(sql, DEFAULT_PROJECT, { cursor: nth("q", LISTED / 2), count: 50 })],
    ["url groups: first page", () => urlGroupPage(sql, DEFAULT_PROJECT, { cursor: null, count: 50 })],
    ["url groups: a page in the middle", () => urlGroupPage(sql, DEFAULT_PROJECT, { cursor: nth("team", LISTED / 2), count: 50 })],
    ["schedules: first page", async () => scheduleStates(sql, DEFAULT_PROJECT, (await schedulePage(sql, DEFAULT_PROJECT, { cursor: null, count: 50 })).items)],
    ["schedules: a page in the middle", async () =>
      scheduleStates(sql, DEFAULT_PROJECT, (await schedulePage(sql, DEFAULT_PROJECT, { cursor: nth("schedule", LISTED / 2), count: 50 })).items)],
    ["schedule: the schedule", () => getSchedule(sql, DEFAULT_PROJECT, nth("schedule", LISTED / 2))],
    ["schedule: its newest messages (none match: the scan's bound)", () => listMessages(sql, { project: DEFAULT_PROJECT, states: null, filter: { scheduleId: [nth("schedule", LISTED / 2)] }, range: { fromDate: null, toDate: null }, cursor: null, count: 10 })],
    ["publish: the URL groups suggested", () => urlGroupPage(sql, DEFAULT_PROJECT, { cursor: null, count: 100 })],
    ["publish: the queues suggested", () => queuePage(sql, DEFAULT_PROJECT, { cursor: null, count: 100 })],
    ["workflow event: the steps waiting for it", () => listWaiters(sql, DEFAULT_PROJECT, "invoice-approved")],
    ["flow control: first page", () => keyStatePage(sql, { project: DEFAULT_PROJECT, search: "" }, { cursor: null, count: 50 })],
    ["flow control: a page in the middle", () => keyStatePage(sql, { project: DEFAULT_PROJECT, search: "" }, { cursor: nth("tenant", LISTED / 2), count: 50 })],
    ["flow control: search, 1 key in 25 matches", () => keyStatePage(sql, { project: DEFAULT_PROJECT, search: "42" }, { cursor: null, count: 50 })],
    ["flow control: search, no key matches", () => keyStatePage(sql, { project: DEFAULT_PROJECT, search: "no-such-tenant" }, { cursor: null, count: 50 })],
    ["workflow runs: newest", () => listRunLogs(sql, DEFAULT_PROJECT, { filter: {}, range: { fromDate: null, toDate: null }, cursor: null, count: 10 }, redactor)],
    ["workflow runs: state", () => listRunLogs(sql, DEFAULT_PROJECT, { filter: { state: ["RUN_STARTED"] }, range: { fromDate: null, toDate: null }, cursor: null, count: 10 }, redactor)],
    ["workflow run: by id", () => listRunLogs(sql, DEFAULT_PROJECT, { filter: { workflowRunId: ["wfr_500"] }, range: { fromDate: null, toDate: null }, cursor: null, count: 1 }, redactor)],
    ["workflow run: its page (steps, their messages and attempts)", () => readRunDetail(sql, DEFAULT_PROJECT, "wfr_500", redactor)],
    // Message i is RETRY when i % 100 is 99 (seed).
    ["message: retry now", () => retryNow(sql, DEFAULT_PROJECT, `msg_${String(Math.floor(MESSAGES / 200) * 100 - 1).padStart(12, "0")}`)],
  ];
  for (const [page, call] of pages) {
    captured.length = 0;
    await call();
    for (const { query, params } of captured.splice(0)) {
      const plan = await admin.unsafe(`explain (analyze, buffers) ${query}`, params as never[]);
      const lines = plan.map((row) => String(row["QUERY PLAN"]));
      const scans = lines.filter((line) => /Scan|Sort|Limit/.test(line)).map((line) => line.trim().replace(/\s+\(cost=.*$/, ""));
      const time = lines.find((line) => line.startsWith("Execution Time"));
      console.log(`\n### ${page} — ${time}\n${query.replace(/\s+/g, " ").slice(0, 160)}…\n${scans.map((scan) => `  ${scan}`).join("\n")}`);
    }
  }
  await sql.end();
}
