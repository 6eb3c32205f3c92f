/**
 * What `dispatch migrate` makes of a database with the citus extension
 * (src/db/citus/layout.ts): the tables that grow with traffic distributed on
 * `project` in one co-location group, their shards on both workers; the small
 * shared tables reference tables; the process tables on the coordinator; keys
 * that hold the project; a second migrate that changes nothing; and the
 * record of plain deliveries, a call delegated to the project's node.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { RECORD_DELIVERED_ON_NODE } from "../../src/db/queries/record-delivered";
import { cloneDatabase } from "../support/database";

const DISTRIBUTED = [
  "attempts",
  "claims",
  "deduplication_keys",
  "dlq",
  "flow_control_keys",
  "messages",
  "project_usage",
  "queues",
  "schedules",
  "url_group_endpoints",
  "url_groups",
  "workflow_notifications",
  "workflow_runs",
  "workflow_steps",
  "workflow_waiters",
];
const REFERENCE = ["access_tokens", "destinations", "message_events_legacy", "projects", "settings"];
const ON_THE_COORDINATOR = ["access_token_uses", "workers"];

let url: string;
let sql: Sql;

beforeAll(async () => {
  url = await cloneDatabase();
  sql = createSql(url, 1);
});
afterAll(async () => {
  await sql?.end();
});

/** Each Dispatch table Citus knows, with how it is kept (h: hash-distributed, n: reference or local) and its group. */
const layout = () =>
  sql<{ table: string; method: string; column: string | null; group: number; replicated: boolean }[]>`
    select c.relname as table, p.partmethod as method,
      case when p.partmethod = 'h' then column_to_column_name(p.logicalrelid, p.partkey) end as column,
      p.colocationid as group, p.repmodel = 't' as replicated
    from pg_dist_partition p join pg_class c on c.oid = p.logicalrelid
    where c.relnamespace = 'dispatch'::regnamespace order by 1`;

it("distributes the tables that grow with traffic on project, all in one co-location group", async () => {
  const tables = await layout();
  const distributed = tables.filter((table) => table.method === "h");
  expect(distributed.map((table) => table.table)).toEqual(DISTRIBUTED);
  expect(new Set(distributed.map((table) => table.column))).toEqual(new Set(["project"]));
  expect(new Set(distributed.map((table) => table.group)).size).toBe(1);
});

it("keeps a copy of the small shared tables on every node, and the process tables on the coordinator alone", async () => {
  const tables = await layout();
  const reference = tables.filter((table) => table.method === "n" && table.replicated).map((table) => table.table);
  expect(reference).toEqual(REFERENCE);
  for (const table of ON_THE_COORDINATOR) {
    const kept = tables.find((known) => known.table === table);
    // Not distributed: unknown to Citus, or a table of the coordinator's own that a reference table's key points at.
    expect(kept === undefined || (kept.method === "n" && !kept.replicated), table).toBe(true);
  }
});

it("places the shards on both workers", async () => {
  const nodes = await sql<{ port: number; shards: number }[]>`
    select nodeport as port, count(*)::int as shards from citus_shards where table_name = 'dispatch.messages'::regclass
    group by 1 order by 1`;
  expect(nodes).toHaveLength(2);
  expect(nodes.every((node) => node.shards > 0)).toBe(true);
});

it("keys every distributed table by the project first", async () => {
  const keys = await sql<{ table: string; key: string }[]>`
    select c.relname as table, pg_get_constraintdef(k.oid) as key from pg_constraint k join pg_class c on c.oid = k.conrelid
    where k.connamespace = 'dispatch'::regnamespace and k.contype in ('p', 'u') and c.relname = any(${DISTRIBUTED}::text[])`;
  expect(keys.length).toBeGreaterThanOrEqual(DISTRIBUTED.length);
  for (const { table, key } of keys) expect(key, table).toMatch(/^(PRIMARY KEY|UNIQUE) \(project, /);
});

it("migrates again without changing anything", async () => {
  const before = await layout();
  expect(await migrate(url)).toBe(true);
  expect(await layout()).toEqual(before);
});

describe("the record of plain deliveries (a function of src/db/queries/record-delivered.ts, src/db/citus/delegated.ts)", () => {
  const SIGNATURE = RECORD_DELIVERED_ON_NODE.signature;
  const record = (project: string, attemptId: number) =>
    sql<{ ids: string[] }[]>`
      select dispatch.record_delivered_on_node(${project}, ${["msg_not_claimed"]}::text[], ${[1]}::bigint[], ${[attemptId]}::bigint[],
        ${[0]}::int[], ${[new Date().toISOString()]}::timestamptz[], ${[5]}::int[], ${[200]}::int[], ${[]}::bigint[]) as ids`;

  it("is a call the coordinator delegates to the node of the project its first argument names", async () => {
    const [fn] = await sql<{ argument: number; group: number }[]>`
      select distribution_argument_index as argument, colocationid as group from pg_dist_object
      where classid = 'pg_proc'::regclass and objid = ${SIGNATURE}::regprocedure`;
    const [messages] = await sql<{ group: number }[]>`
      select colocationid as group from pg_dist_partition where logicalrelid = 'dispatch.messages'::regclass`;
    expect(fn).toEqual({ argument: 0, group: messages!.group });
    await sql`insert into dispatch.projects (name) values ('delegated') on conflict do nothing`;
    const [shard] = await sql<{ port: number }[]>`
      select nodeport as port from citus_shards s
      where s.table_name = 'dispatch.messages'::regclass and s.shardid = get_shard_id_for_distribution_column('dispatch.messages', 'delegated')`;
    const plan = (await sql.unsafe(`explain (costs off) select dispatch.record_delivered_on_node('delegated', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')`))
      .map((row) => Object.values(row)[0] as string)
      .join("\n");
    // One task, on the project's node, which runs the function there: nothing of what it does is planned here.
    expect(plan).toMatch(/Task Count: 1/);
    expect(plan).toContain(`port=${shard!.port} `);
  });

  it("is made once: a second migrate sends no DDL for it to the nodes", async () => {
    const version = () => sql<{ xmin: string }[]>`select xmin::text from pg_proc where oid = ${SIGNATURE}::regprocedure`;
    const before = await version();
    expect(before).toHaveLength(1);
    expect(await migrate(url)).toBe(true);
    expect(await version()).toEqual(before);
  });

  it("logs a batch's attempts once however often it is called with the same ids (an answer lost to an outage)", async () => {
    const [taken] = await sql<{ id: string }[]>`select nextval('dispatch.messages_seq_seq') as id`;
    const id = Number(taken!.id);
    expect((await record("delegated", id))[0]!.ids).toEqual([]);
    expect((await record("delegated", id))[0]!.ids).toEqual([]);
    const logged = await sql<{ id: string }[]>`select id from dispatch.attempts where project = 'delegated' and message_id = 'msg_not_claimed'`;
    expect(logged.map((row) => Number(row.id))).toEqual([id]);
  });
});
