/**
 * Scenario 2h, Citus: 2b's load spread over four projects, against Dispatch
 * on one private Postgres and then on a private 1 + 2 Citus cluster
 * (test/citus/support/cluster.ts), all of the machine's Postgres with the same
 * settings, the four projects chosen so that two live on each worker. For each node, what it
 * carried per delivered message: CPU of its Postgres processes, rows written,
 * WAL, commits; so that the split of the work over the workers, and what
 * stays on the coordinator, can be read beside one server doing it all. Not
 * run (and said so) where Citus is not installed.
 */
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { migrate } from "../src/db/migrate";
import { citusInstalled, citusSettings, makeDistributedDatabase, startCitusCluster } from "../test/citus/support/cluster";
import { startPrivateServer } from "../test/managed/support/server";
import { withDatabase } from "../test/support/global-setup";
import { type Costs, openCostWindow } from "./costs";
import type { DatabaseServer } from "./database";
import { deliveredRateWindow } from "./delivered-rate";
import { makeProjects } from "./projects";
import { type BenchContext, measure, MESSAGES, type ScenarioResult, serviceResult, withDispatch } from "./scenarios";

/** Projects the load is spread over (half of them on each worker). */
const PROJECTS = 4;

/** What one node of the cluster carried. */
export interface NodeCosts {
  node: "coordinator" | "worker 1" | "worker 2";
  costs: Costs;
}

/** Scenario 2h: the plain run and the cluster run (both among the scenarios), and the cluster's costs by node. */
export interface CitusRun {
  plain: ScenarioResult;
  citus: ScenarioResult;
  nodes: NodeCosts[];
}

/** Runs 2h, or returns null (having said why) when Citus is not installed. */
export async function citusSpread(ctx: BenchContext): Promise<CitusRun | null> {
  if (!citusInstalled()) {
    ctx.log("  not run: Citus is not installed for this machine's Postgres (cluster.sh build of the shared tools installs it)");
    return null;
  }
  // One server of the same Postgres and settings as the cluster's nodes, Citus left out.
  const single = await startPrivateServer({ hba: ["host all all 127.0.0.1/32 trust"], settings: citusSettings(true).map((s) => s.replace("citus,", "")) });
  let plain: ScenarioResult;
  try {
    const server = await nodeServer(single.url());
    const databaseUrl = await createDatabase(server.adminUrl, DATABASE);
    const onSingle = { ...ctx, server };
    plain = await withDispatch(onSingle, "s2h_plain", async (dispatch) => {
      const tokens = await makeProjects(databaseUrl, names(PROJECTS));
      const measured = await measure(onSingle, dispatch, { ...deliveredRateWindow(ctx, "s2h_plain"), databaseUrl, messageTable: MESSAGES, tokens });
      return serviceResult("dispatch", false, "2h-plain", `2b over ${PROJECTS} projects, one Postgres (${PG_NOTE})`, dispatch, measured);
    }, databaseUrl);
  } finally {
    await single.stop();
  }
  const cluster = await startCitusCluster(2, { durable: true });
  try {
    const nodes = [cluster.coordinator, ...cluster.workers];
    const databaseUrl = await makeDistributedDatabase(cluster.coordinator.url(), cluster.workers.map((w) => w.url()), DATABASE);
    await migrate(databaseUrl);
    const placed = await projectsTwoPerWorker(databaseUrl);
    const servers = await Promise.all(nodes.map((node) => nodeServer(node.url())));
    const inDatabase = (url: string) => withDatabase(url, DATABASE);
    const onCoordinator = { ...ctx, server: servers[0]! };
    return await withDispatch(onCoordinator, "s2h_citus", async (dispatch) => {
      const tokens = await makeProjects(databaseUrl, placed);
      const workerWindows = await Promise.all(servers.slice(1).map((server, i) => openCostWindow(server, inDatabase(nodes[i + 1]!.url()), [], MESSAGES)));
      const window = { ...deliveredRateWindow(ctx, "s2h_citus"), databaseUrl, messageTable: MESSAGES, tokens };
      const measured = await measure(onCoordinator, dispatch, window);
      // The workers' backends (the coordinator's connections to them) report their counts as they end.
      await settled(nodes.slice(1).map((node) => inDatabase(node.url())));
      const delivered = measured.costs.messages;
      const workers = await Promise.all(workerWindows.map((w) => (w.serviceDone(), w.close(delivered, "delivery"))));
      const citus = serviceResult("dispatch", false, "2h-citus", `2b over ${PROJECTS} projects, Citus 1 + 2, two projects on each worker (${PG_NOTE})`, dispatch, measured);
      const nodeCosts: NodeCosts[] = [
        { node: "coordinator", costs: measured.costs },
        { node: "worker 1", costs: workers[0]! },
        { node: "worker 2", costs: workers[1]! },
      ];
      return { plain, citus, nodes: nodeCosts };
    }, databaseUrl);
  } finally {
    await cluster.stop();
  }
}

/** The database each side of 2h runs on (made on every node of the cluster). */
const DATABASE = "dispatch_bench_2h";
/** What both sides run on. */
const PG_NOTE = "the machine's Postgres 15, private servers with the same settings";

/** Creates `name` on the server at `adminUrl`; its URL. */
async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`create database ${name}`);
  } finally {
    await sql.end();
  }
  await migrate(withDatabase(adminUrl, name));
  return withDatabase(adminUrl, name);
}

/** Waits until the written-row counts of the databases `urls` stop moving (at most 10 s). */
async function settled(urls: string[]): Promise<void> {
  const read = () =>
    Promise.all(
      urls.map(async (url) => {
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        try {
          const [row] = await sql<{ n: string }[]>`select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text as n from pg_stat_user_tables`;
          return row!.n;
        } finally {
          await sql.end();
        }
      }),
    );
  let last = await read();
  for (let waited = 0; waited < 10_000; waited += 1_000) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = await read();
    if (now.every((n, i) => n === last[i]) && now.some((n) => n !== "0")) return;
    last = now;
  }
}

/** `count` project names `bench-<n>`. */
function names(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `bench-${i + 1}`);
}

/** `PROJECTS` names whose messages' shards are on the workers two by two. */
async function projectsTwoPerWorker(databaseUrl: string): Promise<string[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const perPort = new Map<number, number>();
    const chosen: string[] = [];
    for (let n = 1; chosen.length < PROJECTS && n < 1000; n++) {
      const name = `bench-${n}`;
      const [row] = await sql<{ port: number }[]>`
        select nodeport as port from citus_shards where shardid = get_shard_id_for_distribution_column('dispatch.messages', ${name}::text)`;
      if ((perPort.get(row!.port) ?? 0) >= PROJECTS / 2) continue;
      perPort.set(row!.port, (perPort.get(row!.port) ?? 0) + 1);
      chosen.push(name);
    }
    return chosen;
  } finally {
    await sql.end();
  }
}

/** A node as the cost window reads a server: its `postgres` database, and its postmaster (the parent of a backend). */
async function nodeServer(adminUrl: string): Promise<DatabaseServer> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await sql`create extension if not exists pg_stat_statements`;
    // /proc/<pid>/stat: "pid (comm) state ppid ...".
    const postmasterPid = Number(readFileSync(`/proc/${row!.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
    const unused = () => Promise.reject(new Error("a Citus node of the bench makes no databases"));
    return {
      embedded: true,
      adminUrl,
      statementStats: true,
      postmasterPid,
      version: "",
      settings: {},
      createDatabase: unused,
      dropDatabase: unused,
      stop: async () => {},
    };
  } finally {
    await sql.end();
  }
}
