/**
 * The peers: webhook deliverers a Node team would build on a Postgres queue
 * library (pg-boss.ts, graphile-worker.ts beside this file), measured in the
 * bench beside Dispatch and the minimal pipeline.
 */
import type postgres from "postgres";
import type { Service } from "../scenarios";

/** A peer: how to start it, where it keeps its jobs, and how to set its unfinished jobs aside. */
export interface Peer {
  service: Exclude<Service, "dispatch" | "pipeline">;
  /** Prefix of its scenario ids, e.g. `pgboss` for `pgboss-2b-delivered`. */
  id: string;
  script: string;
  /** Its job table (schema.table; partitions included), whose HOT ratio is reported. */
  jobTable: string;
  /** Removes the jobs scenario 1 left unfinished, so 2b starts with nothing to fetch. */
  dropLeftovers: (sql: postgres.Sql) => Promise<{ count: number }>;
}

/** Every peer, in the order the bench runs them. */
export const PEERS: Peer[] = [
  {
    service: "pg-boss",
    id: "pgboss",
    script: "bench/peers/pg-boss.ts",
    jobTable: "pgboss.job",
    dropLeftovers: (sql) => sql`delete from pgboss.job where state < 'completed'`,
  },
  {
    service: "graphile-worker",
    id: "graphile",
    script: "bench/peers/graphile-worker.ts",
    jobTable: "graphile_worker._private_jobs",
    dropLeftovers: (sql) => sql`delete from graphile_worker._private_jobs`,
  },
];

