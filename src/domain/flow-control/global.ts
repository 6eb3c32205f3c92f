/**
 * Global parallelism (`GET /v2/globalParallelism`): how many deliveries the
 * live worker processes may have in flight together, and how many they hold
 * (claimed and not yet recorded: a claim is dropped once all its attempts are).
 */
import type { Tx } from "../../db/client";

/** Live workers' capacity (each runs `concurrency` attempts at most) and the attempts claimed now. */
export async function globalParallelism(tx: Tx, concurrency: number, liveWithinMs = 10_000) {
  const [row] = await tx<{ workers: number; inFlight: number }[]>`
    select
      (select count(*)::int from dispatch.workers
        where id like '%:claims' and heartbeat_at > now() - ${liveWithinMs} * interval '1 millisecond') as workers,
      (select coalesce(sum(cardinality(message_ids)), 0)::int from dispatch.claims) as "inFlight"`;
  return { parallelismMax: row!.workers * concurrency, parallelismCount: row!.inFlight };
}
