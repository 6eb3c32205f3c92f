/**
 * Scenario 5's data: a large backlog of far-future messages, stored the way
 * the service under test stores them, without publishing a million messages
 * through the API.
 *
 * One probe message is published through the API with `Svc-Delay: 30d`.
 * Every row the service wrote for it — in any table of the `dispatch` schema,
 * found by the probe's id — is cloned `rows` times in one
 * `insert ... select ... from generate_series` per table, with the id
 * rewritten and future timestamps spread one second apart. If (and only if)
 * the service handed the probe to graphile-worker, its job is cloned the same
 * way through `graphile_worker.add_jobs`, in batches. So a service that keeps
 * far-future messages out of the engine gets a backlog only in its own tables,
 * and one that schedules them at once gets the jobs too. Then VACUUM ANALYZE.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { request } from "undici";
import type { BenchContext } from "./scenarios";
import { withDispatch } from "./scenarios";

/** How the backlog was made. */
export interface BacklogSeed {
  rows: number;
  probeMessageId: string;
  /** Rows cloned per table. */
  tables: Record<string, number>;
  /** Jobs added to graphile-worker (0 when the service kept the probe out of the engine). */
  engineJobs: number;
  /** Source files of the service that mention a promotion horizon (read at run time, for the report). */
  horizonCode: string[];
  seedMs: number;
  vacuumMs: number;
  /** pg_total_relation_size of the messages table and of graphile-worker's jobs table, MiB. */
  sizesMiB: Record<string, number>;
}

const SRC = fileURLToPath(new URL("../src", import.meta.url));
const JOB_BATCH = 100_000;
/**
 * Body size of the backlog's messages. What a backlog costs is its row count
 * (indexes, scans, vacuum), so bodies stay small and seeding a million rows
 * stays well inside the run's time budget.
 */
const BACKLOG_BODY_BYTES = 128;

/** Seeds `ctx.plan.backlogRows` far-future messages into the database at `url` (see the module comment). */
export async function seedBacklog(ctx: BenchContext, url: string): Promise<BacklogSeed> {
  const probeMessageId = await withDispatch(ctx, "backlog", (dispatch) => publishProbe(ctx, dispatch.url, dispatch.token), url);
  const rows = ctx.plan.backlogRows;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const started = Date.now();
    await sql`set synchronous_commit = off`;
    const tables: Record<string, number> = {};
    for (const table of await tablesHolding(sql, probeMessageId)) {
      tables[table] = await cloneRows(sql, table, probeMessageId, rows);
      ctx.log(`    dispatch.${table}: ${tables[table]} rows`);
    }
    const engineJobs = await cloneJob(sql, probeMessageId, rows);
    ctx.log(`    graphile_worker jobs: ${engineJobs}`);
    const seedMs = Date.now() - started;
    const vacuumStarted = Date.now();
    await sql`vacuum analyze`;
    const vacuumMs = Date.now() - vacuumStarted;
    const [sizes] = await sql<{ messages: number; jobs: number }[]>`
      select pg_total_relation_size('dispatch.messages') / 1048576.0 as messages,
        pg_total_relation_size('graphile_worker._private_jobs') / 1048576.0 as jobs`;
    return {
      rows,
      probeMessageId,
      tables,
      engineJobs,
      horizonCode: horizonCode(),
      seedMs,
      vacuumMs,
      sizesMiB: { "dispatch.messages": Number(sizes!.messages), "graphile_worker._private_jobs": Number(sizes!.jobs) },
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function publishProbe(ctx: BenchContext, baseUrl: string, token: string): Promise<string> {
  const head = `{"s":0,"t":${Date.now()},"d":0,"p":"`;
  const body = `${head}${"x".repeat(BACKLOG_BODY_BYTES - head.length - 2)}"}`;
  const response = await request(`${baseUrl}/v2/publish/${ctx.receiverUrl}/in/backlog/0`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "svc-delay": "30d" },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`probe publish failed: ${response.statusCode} ${text}`);
  return (JSON.parse(text) as { messageId: string }).messageId;
}

/** Tables of the `dispatch` schema with a row mentioning the probe, `messages` first (others may reference it). */
async function tablesHolding(sql: postgres.Sql, probe: string): Promise<string[]> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables
    where table_schema = 'dispatch' and table_type = 'BASE TABLE'
    order by table_name <> 'messages', table_name`;
  const holding: string[] = [];
  for (const { name } of tables) {
    const [row] = await sql`select 1 from dispatch.${sql(name)} t where strpos(row_to_json(t)::text, ${probe}) > 0 limit 1`;
    if (row) holding.push(name);
  }
  return holding;
}

/** A new message id per series value, the same length as the service's own (`msg_` + 28). */
const newId = (series: string) => `'msg_bench' || lpad(${series}::text, 23, '0')`;

/**
 * Clones the probe's rows of `table` `rows` times: text and JSON columns get
 * the probe id replaced, timestamps more than a day ahead move `g` seconds,
 * identity and generated columns take their defaults, the rest is copied.
 */
async function cloneRows(sql: postgres.Sql, table: string, probe: string, rows: number): Promise<number> {
  const columns = await sql<{ name: string; type: string; future: boolean }[]>`
    select column_name as name, data_type as type, false as future from information_schema.columns
    where table_schema = 'dispatch' and table_name = ${table} and is_identity = 'NO' and is_generated = 'NEVER'
    order by ordinal_position`;
  for (const column of columns.filter((c) => c.type.startsWith("timestamp"))) {
    const [row] = await sql<{ future: boolean }[]>`
      select bool_or(${sql(column.name)} > now() + interval '1 day') as future
      from dispatch.${sql(table)} t where strpos(row_to_json(t)::text, ${probe}) > 0`;
    column.future = row?.future ?? false;
  }
  const literal = `'${probe.replace(/'/g, "''")}'`;
  const expressions = columns.map(({ name, type, future }) => {
    const column = `t."${name}"`;
    if (type === "text" || type === "character varying") return `replace(${column}, ${literal}, ${newId("g")})`;
    if (type === "json" || type === "jsonb") return `replace(${column}::text, ${literal}, ${newId("g")})::${type}`;
    if (future) return `${column} + g * interval '1 second'`;
    return column;
  });
  const result = await sql.unsafe(`
    insert into dispatch."${table}" (${columns.map((c) => `"${c.name}"`).join(", ")})
    select ${expressions.join(", ")}
    from dispatch."${table}" t cross join generate_series(1, ${rows}) g
    where strpos(row_to_json(t)::text, ${literal}) > 0`);
  return result.count;
}

/** Clones the probe's graphile-worker job (if the service made one) through `add_jobs`; returns how many. */
async function cloneJob(sql: postgres.Sql, probe: string, rows: number): Promise<number> {
  const [job] = await sql<{ id: string }[]>`
    select id::text from graphile_worker._private_jobs
    where strpos(payload::text, ${probe}) > 0 or strpos(coalesce(key, ''), ${probe}) > 0
    limit 1`;
  if (!job) return 0;
  let added = 0;
  for (let from = 1; from <= rows; from += JOB_BATCH) {
    const to = Math.min(rows, from + JOB_BATCH - 1);
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker.add_jobs(array(
        select row(
          t.identifier,
          replace(j.payload::text, ${probe}, 'msg_bench' || lpad(g::text, 23, '0'))::json,
          q.queue_name,
          case when j.run_at > now() + interval '1 day' then j.run_at + g * interval '1 second' else j.run_at end,
          j.max_attempts,
          replace(j.key, ${probe}, 'msg_bench' || lpad(g::text, 23, '0')),
          j.priority,
          (select array_agg(k) from jsonb_object_keys(j.flags) k)
        )::graphile_worker.job_spec
        from graphile_worker._private_jobs j
        join graphile_worker._private_tasks t on t.id = j.task_id
        left join graphile_worker._private_job_queues q on q.id = j.job_queue_id
        cross join generate_series(${from}::int, ${to}::int) g
        where j.id = ${job.id}::bigint))`;
    added += row!.n;
  }
  return added;
}

/** Files under src/ that mention a promotion horizon, so the report says whether the service has one. */
function horizonCode(): string[] {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
  return files.filter((file) => /promot|horizon/i.test(readFileSync(`${SRC}/${file}`, "utf8")));
}
