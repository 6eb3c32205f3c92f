/**
 * What a measurement cost, per message: CPU of the service process and of
 * Postgres (from /proc), and what Postgres counted — rows written, WAL,
 * statements, commits, and the HOT share of the message table's updates
 * (its partitions' when it is partitioned, as pg-boss's job table is).
 *
 * A cost window opens before a scenario's warm-up and closes after the
 * service stopped, so its backends have ended and flushed their statistics
 * (a busy backend reports them at most once a second, an idle one after up to
 * 10 s; an ending one at once). The service's CPU and its system calls
 * (/proc/<pid>/io: reads and writes on its sockets, with their bytes) are read
 * just before it stops.
 */
import postgres from "postgres";
import { readFileSync } from "node:fs";
import { processTicks, TICK_MICROS, treeTicks } from "./cpu";
import type { DatabaseServer } from "./database";

/** Cumulative counters at one instant. */
interface Counters {
  postgresTicks: number | null;
  rowsWritten: number;
  messageUpdates: number;
  messageHotUpdates: number;
  walBytes: number;
  walRecords: number;
  statements: number | null;
  commits: number;
}

/** A scenario's costs: totals over the window, and per message. */
export interface Costs {
  /** What "message" means here: a delivery, or an accepted publish when nothing delivers. */
  unit: "delivery" | "publish";
  messages: number;
  /** CPU per message, µs: the service process(es), and every Postgres process (null for a server the bench did not start). */
  serviceMicros: number;
  postgresMicros: number | null;
  rowsWritten: number;
  walBytes: number;
  walRecords: number;
  /** Statements the server ran for this database (pg_stat_statements calls, top level); null when not available. */
  statements: number | null;
  /** Transactions ended (commits + rollbacks). */
  commits: number;
  /** n_tup_hot_upd / n_tup_upd of the message table over the window (null without updates). */
  hotRatio: number | null;
  /** The service's read and write system calls per message, and their bytes (sockets to clients, Postgres, receivers). */
  serviceIo: IoCounts;
  /** The raw deltas the per-message figures come from. */
  totals: Record<string, number | null>;
}

/** System calls and their bytes, from /proc/<pid>/io (syscr, syscw, rchar, wchar). */
export interface IoCounts {
  reads: number;
  writes: number;
  readBytes: number;
  writtenBytes: number;
}

/** A process's system-call counters so far (zeros once it is gone). */
function ioOf(pid: number): IoCounts {
  try {
    const fields = Object.fromEntries(
      readFileSync(`/proc/${pid}/io`, "utf8").trim().split("\n").map((line) => line.split(": ") as [string, string]),
    );
    return { reads: Number(fields.syscr), writes: Number(fields.syscw), readBytes: Number(fields.rchar), writtenBytes: Number(fields.wchar) };
  } catch {
    return { reads: 0, writes: 0, readBytes: 0, writtenBytes: 0 };
  }
}

function ioSum(pids: number[]): IoCounts {
  const total: IoCounts = { reads: 0, writes: 0, readBytes: 0, writtenBytes: 0 };
  for (const io of pids.map(ioOf)) for (const key of Object.keys(total) as (keyof IoCounts)[]) total[key] += io[key];
  return total;
}

/** An open cost window; see the module comment. */
export interface CostWindow {
  /** Reads the service's CPU: call while it still runs, after the last message of the window. */
  serviceDone(): void;
  /** Reads the counters again (after the service stopped) and divides by `messages`. */
  close(messages: number, unit: Costs["unit"]): Promise<Costs>;
}

/** Opens a window on database `databaseUrl` of `server`, for service processes `pids` and message table `messageTable` (schema.table, partitions included). */
export async function openCostWindow(server: DatabaseServer, databaseUrl: string, pids: number[], messageTable: string): Promise<CostWindow> {
  const before = await readCounters(server, databaseUrl, messageTable);
  const serviceBefore = sum(pids.map(processTicks));
  const ioBefore = ioSum(pids);
  let serviceTicks = 0;
  let io: IoCounts = { reads: 0, writes: 0, readBytes: 0, writtenBytes: 0 };
  return {
    serviceDone: () => {
      serviceTicks = sum(pids.map(processTicks)) - serviceBefore;
      const after = ioSum(pids);
      io = { reads: after.reads - ioBefore.reads, writes: after.writes - ioBefore.writes, readBytes: after.readBytes - ioBefore.readBytes, writtenBytes: after.writtenBytes - ioBefore.writtenBytes };
    },
    async close(messages, unit) {
      const after = await readCounters(server, databaseUrl, messageTable);
      const delta = (key: keyof Counters) => (after[key] === null || before[key] === null ? null : after[key]! - before[key]!);
      const per = (n: number | null) => (n === null ? null : n / Math.max(1, messages));
      const updates = delta("messageUpdates")!;
      const postgresTicks = delta("postgresTicks");
      return {
        unit,
        messages,
        serviceMicros: per(serviceTicks * TICK_MICROS)!,
        postgresMicros: per(postgresTicks === null ? null : postgresTicks * TICK_MICROS),
        rowsWritten: per(delta("rowsWritten"))!,
        walBytes: per(delta("walBytes"))!,
        walRecords: per(delta("walRecords"))!,
        statements: per(delta("statements")),
        commits: per(delta("commits"))!,
        hotRatio: updates > 0 ? delta("messageHotUpdates")! / updates : null,
        serviceIo: { reads: per(io.reads)!, writes: per(io.writes)!, readBytes: per(io.readBytes)!, writtenBytes: per(io.writtenBytes)! },
        totals: {
          serviceTicks,
          postgresTicks,
          ...Object.fromEntries((Object.keys(before) as (keyof Counters)[]).filter((k) => k !== "postgresTicks").map((k) => [k, delta(k)])),
        },
      };
    },
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The counters now: per-database ones through a connection to it, cluster-wide ones through the admin database. */
async function readCounters(server: DatabaseServer, databaseUrl: string, messageTable: string): Promise<Counters> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const admin = postgres(server.adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [rows] = await db<{ written: string; upd: string; hot: string }[]>`
      with message_tables as (
        select to_regclass(${messageTable}) as relid union select relid from pg_partition_tree(to_regclass(${messageTable})))
      select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text as written,
        coalesce(sum(n_tup_upd) filter (where relid in (select relid from message_tables)), 0)::text as upd,
        coalesce(sum(n_tup_hot_upd) filter (where relid in (select relid from message_tables)), 0)::text as hot
      from pg_stat_user_tables`;
    const [cluster] = await admin<{ bytes: string; records: string; commits: string }[]>`
      select (select wal_bytes::text from pg_stat_wal) as bytes, (select wal_records::text from pg_stat_wal) as records,
        (select (xact_commit + xact_rollback)::text from pg_stat_database where datname = ${name}) as commits`;
    const statements = server.statementStats
      ? Number((await admin<{ calls: string }[]>`
          select coalesce(sum(calls), 0)::text as calls from pg_stat_statements
          where dbid = (select oid from pg_database where datname = ${name})`)[0]!.calls)
      : null;
    return {
      postgresTicks: server.postmasterPid === null ? null : treeTicks(server.postmasterPid),
      rowsWritten: Number(rows!.written),
      messageUpdates: Number(rows!.upd),
      messageHotUpdates: Number(rows!.hot),
      walBytes: Number(cluster!.bytes),
      walRecords: Number(cluster!.records),
      statements,
      commits: Number(cluster!.commits),
    };
  } finally {
    await Promise.all([db.end({ timeout: 5 }), admin.end({ timeout: 5 })]);
  }
}
