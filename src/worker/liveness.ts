/**
 * Crash recovery for the engine (README "Reliability: database outages, crashes, bad input"). Every worker process
 * registers the ids its claims (and graphile-worker's jobs) are held under
 * and beats a heartbeat; any worker process sweeps what is held by ids whose
 * heartbeat stopped: their claims' messages become due again
 * (`sweep-claims.ts`), and their timed jobs are unlocked with
 * `graphile_worker.force_unlock_workers` (open-source graphile-worker would
 * release them only after 4 hours).
 *
 * Duplicates are bounded by this: a live process loses its jobs only if it
 * cannot beat for `deadAfterMs` (a stalled event loop, or a database it cannot
 * reach while others can); then at most its in-flight deliveries are sent
 * again. After a database outage every heartbeat is stale at once, so a
 * process sweeps only once it has itself been beating for `deadAfterMs`: the
 * others have had the same time to beat again.
 */
import { randomBytes } from "node:crypto";
import type { Sql } from "../db/client";
import { sweepDeadClaims, sweepDeadClaimsAcrossNodes } from "../db/queries/sweep-claims";

/** On Citus, every how many sweeps one also drops the claims of workers that have no row (`sweepDeadClaimsAcrossNodes`). */
const EVERY_CLAIM_EVERY = 10;

/** Heartbeat and sweep of one worker process. */
export class Liveness {
  readonly processId = `proc_${randomBytes(8).toString("hex")}`;
  private readonly lockHolderIds = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  /** When the current unbroken run of successful beats started (null after a failed beat). */
  private beatingSince: number | null = null;
  /** Sweeps made (on Citus, the first and every `EVERY_CLAIM_EVERY`th look at every claim). */
  private sweeps = 0;

  constructor(
    private readonly sql: Sql,
    private readonly intervalMs: number,
    private readonly deadAfterMs: number,
    private readonly onError: (error: unknown) => void,
    /** Runs after each successful beat (the recorder drops finished claims). */
    private readonly onBeat: () => Promise<void> = async () => {},
    /** Whether the tables are distributed over a Citus cluster: claims are then on the nodes, heartbeats not. */
    private readonly distributed = false,
  ) {}

  /** Records `lockHolderId` (a worker pool or worker id) as belonging to this process. */
  async register(lockHolderId: string): Promise<void> {
    this.lockHolderIds.add(lockHolderId);
    await this.beat([lockHolderId]);
  }

  /** Forgets lock holders whose jobs were released (a stopped worker pool). */
  forget(lockHolderIds: string[]): void {
    for (const id of lockHolderIds) this.lockHolderIds.delete(id);
  }

  /** Starts beating and sweeping every interval. */
  start(): void {
    this.timer = setInterval(() => {
      this.ticking = this.tick().catch(this.onError);
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops beating and forgets this process's lock holders. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    await this.sql`delete from dispatch.workers where process_id = ${this.processId}`;
  }

  private async tick(): Promise<void> {
    try {
      await this.beat([...this.lockHolderIds]);
    } catch (error) {
      this.beatingSince = null;
      throw error;
    }
    this.beatingSince ??= Date.now();
    await this.onBeat();
    if (Date.now() - this.beatingSince < this.deadAfterMs) return;
    if (!this.distributed) await sweepDeadClaims(this.sql, this.deadAfterMs);
    else await sweepDeadClaimsAcrossNodes(this.sql, this.deadAfterMs, this.sweeps % EVERY_CLAIM_EVERY === 0);
    this.sweeps++;
    await sweepDeadWorkers(this.sql, this.deadAfterMs);
    await (this.distributed ? forgetDeadWorkersAcrossNodes : forgetDeadWorkers)(this.sql, this.deadAfterMs);
  }

  /**
   * Upserts rather than updates: after a stall long enough for another process
   * to sweep this one, its rows come back on the next beat.
   */
  private async beat(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.sql`
      insert into dispatch.workers (id, process_id)
      select unnest(${ids}::text[]), ${this.processId}
      on conflict (id) do update set heartbeat_at = now(), process_id = excluded.process_id`;
  }
}

/**
 * Unlocks jobs held by lock holders that have not beaten for `deadAfterMs`
 * (or never registered) and whose lock is at least that old. Returns the ids
 * released.
 */
export async function sweepDeadWorkers(sql: Sql, deadAfterMs: number): Promise<string[]> {
  const [row] = await sql<{ ids: string[] | null }[]>`
    select array_agg(distinct j.locked_by) as ids
    from graphile_worker.jobs j
    where j.locked_by is not null
      and j.locked_at < now() - ${deadAfterMs} * interval '1 millisecond'
      and not exists (
        select 1 from dispatch.workers w
        where w.id = j.locked_by and w.heartbeat_at > now() - ${deadAfterMs} * interval '1 millisecond')`;
  const ids = row?.ids ?? [];
  await releaseLockHolders(sql, ids);
  return ids;
}

/**
 * Forgets the heartbeats of processes silent for `deadAfterMs` that hold
 * nothing any more (their claims and jobs were swept above): what a crash, or
 * a restore of a backup taken while other processes ran, leaves behind.
 */
export async function forgetDeadWorkers(sql: Sql, deadAfterMs: number): Promise<void> {
  await sql`
    delete from dispatch.workers w
    where w.heartbeat_at < now() - ${deadAfterMs} * interval '1 millisecond'
      and not exists (select 1 from dispatch.claims c where c.worker_id = w.id)
      and not exists (select 1 from graphile_worker.jobs j where j.locked_by = w.id)`;
}

/**
 * `forgetDeadWorkers` on Citus, where the claims are on the nodes: the silent workers read first (the
 * coordinator's own table), and only when there are some, which of them still hold claims (every node
 * asked). A claim registered between the two reads by a worker forgotten here is swept by the next look
 * at every claim (`sweepDeadClaimsAcrossNodes`).
 */
export async function forgetDeadWorkersAcrossNodes(sql: Sql, deadAfterMs: number): Promise<void> {
  const [silent] = await sql<{ ids: string[] }[]>`
    select coalesce(array_agg(id), '{}') as ids from dispatch.workers
    where heartbeat_at < now() - ${deadAfterMs} * interval '1 millisecond'`;
  if (silent!.ids.length === 0) return;
  const [holding] = await sql<{ ids: string[] }[]>`
    select coalesce(array_agg(distinct worker_id), '{}') as ids from dispatch.claims where worker_id = any(${silent!.ids}::text[])`;
  await sql`
    delete from dispatch.workers w
    where w.id = any(${silent!.ids}::text[]) and w.id <> all(${holding!.ids}::text[])
      and w.heartbeat_at < now() - ${deadAfterMs} * interval '1 millisecond'
      and not exists (select 1 from graphile_worker.jobs j where j.locked_by = w.id)`;
}

/** Unlocks every job locked by `ids` and forgets their heartbeats. */
export async function releaseLockHolders(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`select graphile_worker.force_unlock_workers(${ids}::text[])`;
  await sql`delete from dispatch.workers where id = any(${ids}::text[])`;
}
