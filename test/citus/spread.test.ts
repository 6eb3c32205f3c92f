/**
 * Dispatch on a 1 + 2 Citus cluster spreads the work over the workers: two
 * projects whose shards live on different workers, an API replica and two
 * worker processes; each project's messages are claimed and recorded on its
 * own node (the statements name the project, so Citus routes them there), each
 * delivered exactly once, and both workers' databases did the work. And a
 * deduplication race between two API replicas stores one message.
 */
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { createSql } from "../../src/db/client";
import { withDatabase } from "../support/global-setup";
import { poll } from "../support/poll";
import { type DispatchProcess, killAllDispatchProcesses, startDispatchProcess } from "../support/processes";
import { tokenDigest } from "../../src/domain/access-tokens/access-tokens";
import { useReceiver } from "../support/receiver";
import { startTestService, TEST_TOKEN, type TestService, useDispatch } from "../support/service";

const PER_PROJECT = 40;
const dispatch = useDispatch({}, { role: "api" });
const receiver = useReceiver();
/** Two project names whose shards are on different workers (`onEachWorker`), made in `beforeAll`. */
const names: string[] = [];
let workers: DispatchProcess[] = [];

/** The first project name of the form `team-<n>` whose messages' shard lives on each worker, by port. */
async function onEachWorker(): Promise<Map<number, string>> {
  const byPort = new Map<number, string>();
  for (let n = 0; byPort.size < 2 && n < 100; n++) {
    const name = `team-${n}`;
    const [row] = await dispatch.service.sql<{ port: number }[]>`
      select s.nodeport as port from citus_shards s
      where s.shardid = get_shard_id_for_distribution_column('dispatch.messages', ${name}::text)`;
    if (!byPort.has(row!.port)) byPort.set(row!.port, name);
  }
  return byPort;
}

/** A project's API client: its full token, made with the project (as test/support/projects.ts makes one). */
const clients: ((path: string, init?: RequestInit) => Promise<Response>)[] = [];

beforeAll(async () => {
  const byPort = await onEachWorker();
  expect(byPort.size).toBe(2);
  names.push(...byPort.values());
  for (const name of names) {
    const token = `${name}-token-0123456789abcdef`;
    await dispatch.service.sql`insert into dispatch.projects (name) values (${name})`;
    await dispatch.service.sql`
      insert into dispatch.access_tokens (name, project, digest, read_only) values (${`${name}-ci`}, ${name}, ${tokenDigest(token)}, false)`;
    clients.push((path, init = {}) => fetch(`${dispatch.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${token}` } }));
  }
});

beforeAll(async () => {
  const env = { DATABASE_URL: dispatch.service.databaseUrl, DISPATCH_TOKEN: TEST_TOKEN, DISPATCH_ALLOW_PRIVATE_NETWORKS: "true" };
  workers = await Promise.all([1, 2].map(() => startDispatchProcess("worker", env)));
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.terminate()));
  await killAllDispatchProcesses();
});

/** Rows the test database's tables on the worker at `url` had updated so far. */
async function updatedOn(url: string): Promise<number> {
  const database = new URL(dispatch.service.databaseUrl).pathname.slice(1);
  const sql = createSql(withDatabase(url, database), 1);
  try {
    const [row] = await sql<{ n: number }[]>`select tup_updated::int as n from pg_stat_database where datname = current_database()`;
    return row!.n;
  } finally {
    await sql.end();
  }
}

it("claims and records each project's messages on its own worker, each delivered exactly once", async () => {
  const workerUrls = inject("citusWorkers");
  const before = await Promise.all(workerUrls.map(updatedOn));
  for (const [i, api] of clients.entries()) {
    const items = Array.from({ length: PER_PROJECT }, (_, n) => ({ destination: `${receiver.url}/${names[i]}`, body: `${names[i]} ${n}` }));
    const response = await api("/v2/batch", { method: "POST", body: JSON.stringify(items) });
    expect(response.status).toBe(200);
  }
  await receiver.waitFor(2 * PER_PROJECT);
  for (const name of names) {
    const bodies = receiver.requests.filter((request) => request.path === `/${name}`).map((request) => request.body.toString());
    expect(new Set(bodies).size).toBe(PER_PROJECT);
    expect(bodies).toHaveLength(PER_PROJECT);
  }
  const delivered = () =>
    dispatch.service.sql<{ project: string; n: number }[]>`
      select project, count(*)::int as n from dispatch.messages where state = 'DELIVERED' group by 1 order by 1`;
  await poll(async () => (await delivered()).length === 2 && (await delivered()).every((row) => row.n === PER_PROJECT), "all recorded");
  // Claiming and recording a message update its row at least twice on the node that holds it.
  const after = await Promise.all(workerUrls.map(updatedOn));
  await poll(async () => {
    const now = await Promise.all(workerUrls.map(updatedOn));
    return now.every((n, i) => n - before[i]! >= 2 * PER_PROJECT) || undefined;
  }, `both workers to report their updates (now ${after.map((n, i) => n - before[i]!).join(", ")})`);
});

it("stores one message for a deduplication id two API replicas race to publish", async () => {
  const second: TestService = await startTestService({}, { role: "api", databaseUrl: dispatch.service.databaseUrl });
  try {
    const replicas = [dispatch, second];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        replicas[n % 2]!.api(`/v2/publish/${receiver.url}/once`, { method: "POST", headers: { "Svc-Deduplication-Id": "race" }, body: `${n}` }),
      ),
    );
    const ids = await Promise.all(answers.map(async (answer) => (await answer.json()).messageId as string));
    expect(new Set(ids).size).toBe(1);
    const rows = await dispatch.service.sql`select id from dispatch.messages where deduplication_id = 'race'`;
    expect(rows.map((row) => row.id)).toEqual([ids[0]]);
    await poll(() => receiver.requests.some((request) => request.path === "/once") || undefined, "the one message");
  } finally {
    await second.stop();
  }
});
