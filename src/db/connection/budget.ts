/**
 * The connections one Dispatch process holds, so that a start can tell
 * whether the server's limits leave room for them, and every message about
 * running out says what to lower or raise (README "Connection budget"):
 *
 * - the app pool, up to DISPATCH_DATABASE_POOL_SIZE, opened on demand and
 *   closed when idle, on DATABASE_URL (a pooler's, when one is configured);
 * - one listening connection (LISTEN: the engine's wake-ups, token and key
 *   changes) on the direct URL;
 * - in the worker roles, graphile-worker's pool for timed jobs on the direct URL.
 * Migrations take one more on the direct URL while they run.
 */

/** graphile-worker's pool: one connection holds its LISTEN, the other runs its jobs' queries. */
export const TIMED_JOB_CONNECTIONS = 2;

/** What one process holds. */
export interface ConnectionBudget {
  /** The app pool's size (DISPATCH_DATABASE_POOL_SIZE). */
  appPool: number;
  /** The listening connection. */
  listening: number;
  /** graphile-worker's pool (worker roles only). */
  timedJobs: number;
}

/** The budget of a process that runs the worker (`worker`, `all`) or not (`api`). */
export function connectionBudget(appPool: number, runsWorker: boolean): ConnectionBudget {
  return { appPool, listening: 1, timedJobs: runsWorker ? TIMED_JOB_CONNECTIONS : 0 };
}

/** Connections to the server itself: the app pool counts unless it goes through a pooler. */
export function directConnections(budget: ConnectionBudget, pooled: boolean): number {
  return (pooled ? 0 : budget.appPool) + budget.listening + budget.timedJobs;
}

/** What the process holds and what to change, for a message about a limit. */
export function describeBudget(budget: ConnectionBudget, pooled: boolean): string {
  const direct = directConnections(budget, pooled);
  const parts = [
    ...(pooled ? [] : [`DISPATCH_DATABASE_POOL_SIZE=${budget.appPool} for queries`]),
    `${budget.listening} listening`,
    ...(budget.timedJobs > 0 ? [`${budget.timedJobs} for graphile-worker's timed jobs`] : []),
  ];
  const pooler = pooled ? ` (and up to ${budget.appPool} to the pooler in DATABASE_URL)` : "";
  return (
    `this process holds up to ${direct} connections to the server (${parts.join(", ")})${pooler}: ` +
    "lower DISPATCH_DATABASE_POOL_SIZE (at least 2), or raise the role's CONNECTION LIMIT or the server's max_connections"
  );
}

/** The largest app pool that fits in `free` connections beside the rest of the budget. */
export function poolSizeThatFits(budget: ConnectionBudget, free: number): number {
  return free - budget.listening - budget.timedJobs;
}
