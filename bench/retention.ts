/**
 * Scenario 10, retention under load: a database holding `rows` messages that
 * finished 40 days ago (each with its attempt row, as the service writes
 * them), beyond the 14-day retention. Scenarios 1 and 2b run on it while
 * the retention removal (src/worker/maintenance/retention.ts, what the maintenance task
 * runs) deletes them beside; their rates are compared with the empty table's
 * of the same run. Sizes: the message and attempt tables with their indexes
 * before seeding, seeded, once everything expired is gone and VACUUM ran
 * (deleted space is reused, not returned to the file system), and then over
 * three more cycles of storing as many rows again and removing them: the
 * tables are at their steady state when a cycle's peak is the one before's.
 */
import postgres from "postgres";
import { createSql } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { removeExpired } from "../src/worker/maintenance/retention";
import { type BenchContext, publishThenDeliver, type ScenarioResult } from "./scenarios";

export interface RetentionRun {
  rows: number;
  seedMs: number;
  /** Rows removed, and how long the removal ran, beside the load and after it. */
  removed: number;
  removalMs: number;
  /** Rows removed a second while the load ran, at the maintenance task's pace (after it, without rest). */
  pacedPerSecond: number;
  /** Whether every expired row was removed by the end. */
  complete: boolean;
  /**
   * Messages and attempts with their indexes. `cycles`: the three later cycles' peaks (as many
   * rows again stored) and troughs (removed, VACUUM ran).
   */
  sizesMiB: { empty: number; seeded: number; afterRemoval: number; cycles: { peak: number; trough: number }[] };
  results: ScenarioResult[];
}

const DAY = 86_400_000;
const RETENTION = { messagesMs: 14 * DAY, dlqMs: 30 * DAY, workflowRunsMs: 14 * DAY };

export async function retentionUnderLoad(ctx: BenchContext): Promise<RetentionRun> {
  const rows = ctx.plan.backlogRows;
  const url = await ctx.server.createDatabase("retention");
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const removal = createSql(url, 2);
  try {
    await migrate(url);
    const empty = await sizeMiB(admin);
    const seedStarted = Date.now();
    await seed(admin, rows, "msg_expired");
    const seedMs = Date.now() - seedStarted;
    const seeded = await sizeMiB(admin);
    ctx.log(`    seeded ${rows.toLocaleString("en-US")} expired messages in ${(seedMs / 1000).toFixed(1)} s; removing them under load`);
    const removalStarted = Date.now();
    let removed = 0;
    let loadDone = false;
    const removing = (async () => {
      for (;;) {
        // At the maintenance task's pace while the load is measured; then without rest, as nothing else runs.
        const batch = await removeExpired(removal, RETENTION, { budgetMs: 5_000, duty: loadDone ? 1 : undefined });
        removed += batch.messages;
        if (batch.messages === 0 && loadDone) return;
        if (batch.messages === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const results = await publishThenDeliver(ctx, url, "retention").finally(() => (loadDone = true));
    const pacedPerSecond = removed / ((Date.now() - removalStarted) / 1000);
    await removing;
    const removalMs = Date.now() - removalStarted;
    await admin`vacuum`;
    const [left] = await admin<{ n: number }[]>`select count(*)::int as n from dispatch.messages where id like 'msg_expired%'`;
    const afterRemoval = await sizeMiB(admin);
    const cycles = [];
    for (const prefix of ["msg_again1_", "msg_again2_", "msg_again3_"]) cycles.push(await cycle(admin, removal, rows, prefix));
    const sizesMiB = { empty, seeded, afterRemoval, cycles };
    return { rows, seedMs, removed, removalMs, pacedPerSecond, complete: left!.n === 0, sizesMiB, results };
  } finally {
    await removal.end({ timeout: 5 });
    await admin.end({ timeout: 5 });
    await ctx.server.dropDatabase(url);
  }
}

/** Stores `rows` expired messages again and removes them: the sizes at the peak and after. */
async function cycle(admin: postgres.Sql, removal: ReturnType<typeof createSql>, rows: number, prefix: string) {
  await seed(admin, rows, prefix);
  const peak = await sizeMiB(admin);
  // Nothing else runs now: the removal need not leave room (duty 1).
  while ((await removeExpired(removal, RETENTION, { budgetMs: 600_000, duty: 1 })).messages > 0);
  await admin`vacuum`;
  return { peak, trough: await sizeMiB(admin) };
}

/** `rows` delivered messages with their attempts, finished 40 days ago, their ids starting with `prefix`. */
async function seed(sql: postgres.Sql, rows: number, prefix: string): Promise<void> {
  await sql`set synchronous_commit = off`;
  await sql`
    insert into dispatch.messages (id, dialect, state, url, method, headers, body, max_retries, not_before,
      next_delivery_at, created_at, completed_at)
    select ${prefix} || lpad(g::text, 21, '0'), 'svc', 'DELIVERED', 'http://127.0.0.1:9/expired', 'POST', '{}',
      convert_to(repeat('x', 128), 'UTF8'), 3, now() - interval '40 days', now() - interval '40 days',
      now() - interval '40 days', now() - interval '40 days'
    from generate_series(1, ${rows}) g`;
  await sql`
    insert into dispatch.attempts (message_id, retried, started_at, duration_ms, result)
    select ${prefix} || lpad(g::text, 21, '0'), 0, now() - interval '40 days', 5, 'DELIVERED'
    from generate_series(1, ${rows}) g`;
  await sql`vacuum analyze`;
}

async function sizeMiB(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ mib: number }[]>`
    select (pg_total_relation_size('dispatch.messages') + pg_total_relation_size('dispatch.attempts')) / 1048576.0 as mib`;
  return Number(row!.mib);
}
