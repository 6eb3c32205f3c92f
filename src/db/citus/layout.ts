/**
 * Dispatch's tables on a Citus cluster (docs/citus.md): what grows with traffic is
 * distributed on `project` and co-located, so that one project's messages, attempts,
 * DLQ entries, deduplication keys, queues, flow-control keys, URL groups, schedules and
 * workflow runs live on one node and every statement about them runs there; the small
 * tables every node reads are reference tables (a copy on each node); the process
 * tables (`workers`, `access_token_uses`, `dashboard_sessions`) and graphile-worker's
 * schema stay on the coordinator. `claims` is distributed beside the messages too, by
 * `distributeClaims`: each claim is of one project, registered on its node by the
 * claim's own call (db/queries/claim-by-project.ts).
 *
 * `distributeTables` runs after the migrations when the database has the `citus`
 * extension and `dispatch.messages` is not distributed yet: once, in one transaction
 * under the migration lock. Citus enforces a key only when it holds the distribution
 * column, so the keys of the message-scoped tables gain `project` first; the plain
 * schema keeps its own (a project's ids are unique on one server either way).
 */
import type { Tx } from "../client";

/** Tables every node reads and few statements write: a copy on each node. */
const REFERENCE_TABLES = ["projects", "settings", "access_tokens", "destinations", "message_events_legacy"];
/** Tables distributed on `project` beside `messages` (which is distributed first). */
const COLOCATED_TABLES = [
  "attempts",
  "dlq",
  "deduplication_keys",
  "queues",
  "flow_control_keys",
  "url_groups",
  "url_group_endpoints",
  "schedules",
  "workflow_runs",
  "workflow_steps",
  "workflow_waiters",
  "workflow_notifications",
  "project_usage",
];

/** Keys and foreign keys re-made with `project` before the tables are distributed (foreign keys: after). */
const KEYS_BEFORE = [
  // Rows written before attempts and steps carried their project (migration 0031).
  `update dispatch.attempts a set project = m.project from dispatch.messages m where a.project is null and m.id = a.message_id`,
  `delete from dispatch.attempts where project is null`,
  `update dispatch.workflow_steps s set project = r.project from dispatch.workflow_runs r where s.project is null and r.pk = s.run_pk`,
  `alter table dispatch.attempts alter column project set not null`,
  `alter table dispatch.workflow_steps alter column project set not null`,
  `alter table dispatch.dlq drop constraint dlq_message_id_messages_id_fk, drop constraint dlq_message_id_unique, drop constraint dlq_pkey`,
  `alter table dispatch.url_group_endpoints drop constraint url_group_endpoints_group_fk`,
  `alter table dispatch.workflow_steps drop constraint workflow_steps_run_pk_workflow_runs_pk_fk, drop constraint workflow_steps_pkey`,
  `alter table dispatch.workflow_waiters drop constraint workflow_waiters_run_pk_workflow_runs_pk_fk, drop constraint workflow_waiters_pkey`,
  `alter table dispatch.dlq add primary key (project, dlq_id), add constraint dlq_message_id_unique unique (project, message_id)`,
  `alter table dispatch.messages drop constraint messages_pkey, add primary key (project, id)`,
  `drop index dispatch.messages_seq_idx`,
  `create unique index messages_seq_idx on dispatch.messages (project, seq)`,
  `drop index dispatch.messages_canceled_seq_idx`,
  `create unique index messages_canceled_seq_idx on dispatch.messages (project, canceled_seq) where canceled_seq is not null`,
  `alter table dispatch.attempts drop constraint attempts_pkey, add primary key (project, id)`,
  `alter table dispatch.workflow_runs drop constraint workflow_runs_pkey, add primary key (project, pk)`,
  `alter table dispatch.workflow_steps add primary key (project, seq)`,
  `alter table dispatch.workflow_waiters add primary key (project, id)`,
  `alter table dispatch.workflow_notifications drop constraint workflow_notifications_pkey, add primary key (project, id)`,
];

const FOREIGN_KEYS_AFTER = [
  `alter table dispatch.dlq add constraint dlq_message_id_messages_id_fk
     foreign key (project, message_id) references dispatch.messages (project, id)`,
  `alter table dispatch.url_group_endpoints add constraint url_group_endpoints_group_fk
     foreign key (project, group_name) references dispatch.url_groups (project, name) on delete cascade`,
  `alter table dispatch.workflow_steps add constraint workflow_steps_run_pk_workflow_runs_pk_fk
     foreign key (project, run_pk) references dispatch.workflow_runs (project, pk) on delete cascade`,
  `alter table dispatch.workflow_waiters add constraint workflow_waiters_run_pk_workflow_runs_pk_fk
     foreign key (project, run_pk) references dispatch.workflow_runs (project, pk) on delete cascade`,
];

/** Whether the database has the `citus` extension: Dispatch then runs distributed. */
export async function hasCitus(sql: Tx): Promise<boolean> {
  const [row] = await sql<{ citus: boolean }[]>`select exists (select 1 from pg_extension where extname = 'citus') as citus`;
  return row!.citus;
}

/** Whether the tables are distributed (`distributeTables` ran): false on plain Postgres. */
export async function isDistributed(sql: Tx): Promise<boolean> {
  return (await hasCitus(sql)) && (await isDistributedTable(sql, "dispatch.messages"));
}

/** Whether the claims are distributed (`distributeClaims` ran); call only on a database with Citus. */
export function claimsDistributed(sql: Tx): Promise<boolean> {
  return isDistributedTable(sql, "dispatch.claims");
}

async function isDistributedTable(sql: Tx, table: string): Promise<boolean> {
  const [row] = await sql<{ distributed: boolean }[]>`
    select exists (select 1 from pg_dist_partition where logicalrelid = ${table}::regclass) as distributed`;
  return row!.distributed;
}

/**
 * Distributes `claims` on `project` beside the messages, after `distributeTables` (in the same
 * migration, or in a later one for a database distributed before claims were). A claim without a
 * project (one taken by a build before migration 0033, or by the one-server statement before the
 * move to Citus) cannot be placed: the caller releases those first (`releaseClaimsWithoutProject`),
 * as a dead worker's claims are, their unfinished messages due again at once.
 */
export async function distributeClaims(tx: Tx): Promise<void> {
  await tx`alter table dispatch.claims drop constraint claims_pkey, add primary key (project, id)`;
  await tx`select create_distributed_table('dispatch.claims', 'project', colocate_with => 'dispatch.messages')`;
}

/**
 * Distributes the tables (see above). The views over them are dropped and made
 * again (Citus distributes a table only when nothing local depends on it), and
 * the functions of the schema are made on every node, so that statements routed
 * to a node can call them.
 */
export async function distributeTables(tx: Tx): Promise<void> {
  const views = await tx<{ name: string; definition: string }[]>`
    select c.relname as name, pg_get_viewdef(c.oid) as definition from pg_class c
    where c.relnamespace = 'dispatch'::regnamespace and c.relkind = 'v'`;
  for (const statement of KEYS_BEFORE) await tx.unsafe(statement);
  for (const { name } of views) await tx.unsafe(`drop view dispatch.${name}`);
  for (const table of REFERENCE_TABLES) await tx`select create_reference_table(${`dispatch.${table}`})`;
  await tx`select create_distributed_table('dispatch.messages', 'project')`;
  for (const table of COLOCATED_TABLES) {
    await tx`select create_distributed_table(${`dispatch.${table}`}, 'project', colocate_with => 'dispatch.messages')`;
  }
  for (const statement of FOREIGN_KEYS_AFTER) await tx.unsafe(statement);
  for (const { name, definition } of views) await tx.unsafe(`create view dispatch.${name} as ${definition}`);
  await tx`
    select create_distributed_function(p.oid::regprocedure) from pg_proc p
    where p.pronamespace = 'dispatch'::regnamespace`;
}
