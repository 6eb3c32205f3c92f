/**
 * A transaction Postgres cancels to break a deadlock is run again
 * (src/db/deadlocks.ts): a real deadlock between two transactions on the
 * test database, the retried one made its victim; any other error is the
 * caller's at once.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSql, type Sql } from "../src/db/client";
import { beginRetryingDeadlocks } from "../src/db/deadlocks";
import { cloneDatabase } from "./support/database";
import { poll } from "./support/poll";

let sql: Sql;

beforeAll(async () => {
  sql = createSql(await cloneDatabase(), 4);
  await sql`create table deadlock_rows (id int primary key, n int not null)`;
  await sql`insert into deadlock_rows values (1, 0), (2, 0)`;
});
afterAll(async () => {
  await sql?.end();
});

/** Whether the backend `pid` waits for a lock. */
const waitsForLock = async (pid: number) =>
  (await sql`select 1 from pg_stat_activity where pid = ${pid} and wait_event_type = 'Lock'`).length === 1;

it("runs a deadlock's victim again, and both transactions commit", async () => {
  let otherLocked!: () => void;
  const otherHasRowTwo = new Promise<void>((resolve) => (otherLocked = resolve));
  let tries = 0;
  let victimPid = 0;
  // Locks row 1, then row 2 (held by the other). Postgres cancels the backend whose deadlock check finds the
  // cycle: this one's runs 3 s after it waits, well after the other closes the cycle, and long before the
  // other's (60 s). Tried again, it waits for the other to commit. (The test cluster's user may set both.)
  const retried = beginRetryingDeadlocks(sql, async (tx) => {
    tries++;
    await tx`set local deadlock_timeout = '3s'`;
    const [backend] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
    victimPid = backend!.pid;
    await tx`update deadlock_rows set n = n + 1 where id = 1`;
    await otherHasRowTwo;
    await tx`update deadlock_rows set n = n + 10 where id = 2`;
  });
  const other = sql.begin(async (tx) => {
    await tx`set local deadlock_timeout = '60s'`;
    await tx`update deadlock_rows set n = n + 100 where id = 2`;
    otherLocked();
    await poll(() => tries === 1 && victimPid !== 0 && waitsForLock(victimPid), "the first try to wait for row 2");
    await tx`update deadlock_rows set n = n + 1000 where id = 1`;
  });
  await Promise.all([retried, other]);
  expect(tries).toBe(2);
  expect(await sql`select id, n from deadlock_rows order by id`).toEqual([
    { id: 1, n: 1001 },
    { id: 2, n: 110 },
  ]);
});

it("gives any other error to its caller at once", async () => {
  let tries = 0;
  const failing = beginRetryingDeadlocks(sql, async (tx) => {
    tries++;
    await tx`select 1 / 0`;
  });
  await expect(failing).rejects.toThrow(/division by zero/);
  expect(tries).toBe(1);
});
