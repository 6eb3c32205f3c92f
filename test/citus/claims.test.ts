/**
 * Claims on Citus (src/db/citus/layout.ts, src/db/queries/claim-by-project.ts):
 * distributed on the project beside the messages, so that a claim is one call
 * the coordinator delegates to the project's node, which takes the messages
 * and registers the claim there; the record's call drops the project's
 * finished claims on that node; the sweep asks the nodes only when a worker
 * went silent (and now and then for claims whose worker has no row); and a
 * database distributed before claims were gets them distributed by its next
 * migrate, the claims it cannot place released.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { CLAIM_CALL, ClaimIds, claimProjectMessages } from "../../src/db/queries/claim-by-project";
import { recordDeliveredOnNode, takeAttemptIds } from "../../src/db/queries/record-delivered";
import { sweepDeadClaimsAcrossNodes } from "../../src/db/queries/sweep-claims";
import { forgetDeadWorkersAcrossNodes } from "../../src/worker/liveness";
import { cloneDatabase } from "../support/database";

let url: string;
let sql: Sql;

beforeAll(async () => {
  url = await cloneDatabase();
  sql = createSql(url, 2);
});
afterAll(async () => {
  await sql?.end();
});

const ROOM = { limit: 10, share: 10, byDestination: {}, pass: 0 };

/** A new project with `count` messages due now; returns the project and the messages' ids. */
async function dueMessages(count: number): Promise<{ project: string; ids: string[] }> {
  const project = `p_${randomBytes(4).toString("hex")}`;
  await sql`insert into dispatch.projects (name) values (${project})`;
  const ids = Array.from({ length: count }, (_, i) => `msg_${project}_${i}`);
  for (const id of ids) {
    await sql`
      insert into dispatch.messages (id, project, dialect, url, destination, method, headers, body, max_retries, not_before, next_delivery_at, due_at)
      values (${id}, ${project}, 'upstash', 'http://127.0.0.1:9/claims', '127.0.0.1:9', 'POST', '{}', '\\x41', 3, now(), now(), now())`;
  }
  return { project, ids };
}

/** The port of the worker node that holds `table`'s shard for `project`. */
async function nodeOf(table: string, project: string): Promise<number> {
  const [shard] = await sql<{ port: number }[]>`
    select nodeport as port from citus_shards
    where table_name = ${table}::regclass and shardid = get_shard_id_for_distribution_column(${table}::regclass, ${project}::text)`;
  return shard!.port;
}

const claimsOf = (project: string) =>
  sql<{ id: number; workerId: string; messageIds: string[] }[]>`
    select id, worker_id as "workerId", message_ids as "messageIds" from dispatch.claims where project = ${project} order by id`;

const dueOf = (ids: string[]) =>
  sql<{ id: string; due: boolean; claimId: number | null }[]>`
    select id, due_at is not null as due, claim_id as "claimId" from dispatch.messages where id = any(${ids}::text[]) order by id`;

describe("the claim", () => {
  it("is one call the coordinator delegates to the project's node, where its claim is registered beside the messages", async () => {
    const { project, ids } = await dueMessages(3);
    expect(await nodeOf("dispatch.claims", project)).toBe(await nodeOf("dispatch.messages", project));
    const values = ["1", "10", "10", "'{}'", "0", `'${project}'`, "'w'"];
    const call = CLAIM_CALL.replace(/\$(\d)/g, (_, n: string) => values[Number(n) - 1]!);
    const plan = (await sql.unsafe(`explain (costs off) ${call}`))
      .map((row) => Object.values(row)[0] as string)
      .join("\n");
    // One task, on the project's node, which runs the function there: nothing of what it does is planned here.
    expect(plan).toMatch(/Task Count: 1/);
    expect(plan).toContain(`port=${await nodeOf("dispatch.messages", project)} `);

    const claim = await claimProjectMessages(sql, "claims-test", ROOM, project, new ClaimIds());
    expect(claim.messages.map((message) => message.id).sort()).toEqual(ids);
    const claimId = claim.messages[0]!.claimId;
    expect(claim.messages.every((message) => message.claimId === claimId && message.body.equals(Buffer.from("A")))).toBe(true);
    expect(await claimsOf(project)).toEqual([{ id: claimId, workerId: "claims-test", messageIds: ids }]);
    expect((await dueOf(ids)).every((message) => !message.due && message.claimId === claimId)).toBe(true);
  });

  it("registers nothing when it takes nothing", async () => {
    const { project } = await dueMessages(0);
    const claim = await claimProjectMessages(sql, "claims-test", ROOM, project, new ClaimIds());
    expect(claim.messages).toEqual([]);
    expect(await claimsOf(project)).toEqual([]);
  });
});

describe("the record of plain deliveries", () => {
  it("drops the project's finished claims on its node in the same call", async () => {
    const { project, ids } = await dueMessages(2);
    const claim = await claimProjectMessages(sql, "claims-test", ROOM, project, new ClaimIds());
    const attempts = claim.messages.map((message) => ({
      messageId: message.id,
      project,
      claimId: message.claimId,
      retried: 0,
      startedAt: new Date(),
      durationMs: 1,
      status: 200,
    }));
    const changed = await recordDeliveredOnNode(sql, attempts, await takeAttemptIds(sql, attempts.length), [claim.messages[0]!.claimId]);
    expect(changed.sort()).toEqual(ids);
    expect(await claimsOf(project)).toEqual([]);
  });
});

describe("the sweep across nodes", () => {
  /** A claim of `workerId` on a new project's message, `age` old; the worker's heartbeat as given (null: no row). */
  async function claimOf(workerId: string, heartbeat: "live" | "silent" | null) {
    const { project, ids } = await dueMessages(1);
    await claimProjectMessages(sql, workerId, ROOM, project, new ClaimIds());
    await sql`update dispatch.claims set claimed_at = now() - interval '1 hour' where project = ${project}`;
    if (heartbeat !== null) {
      const at = heartbeat === "live" ? sql`now()` : sql`now() - interval '1 hour'`;
      await sql`insert into dispatch.workers (id, process_id, heartbeat_at) values (${workerId}, 'proc_claims_test', ${at})`;
    }
    return { project, ids };
  }

  it("drops a silent worker's claims and makes their messages due; a live worker's stay; a worker with no row waits for the look at every claim", async () => {
    const suffix = randomBytes(4).toString("hex");
    const live = await claimOf(`live_${suffix}`, "live");
    const silent = await claimOf(`silent_${suffix}`, "silent");
    const gone = await claimOf(`gone_${suffix}`, null);

    expect(await sweepDeadClaimsAcrossNodes(sql, 60_000, false)).toBe(1);
    expect(await claimsOf(silent.project)).toEqual([]);
    expect(await dueOf(silent.ids)).toEqual([{ id: silent.ids[0], due: true, claimId: expect.any(Number) }]);
    expect(await claimsOf(live.project)).toHaveLength(1);
    expect(await claimsOf(gone.project)).toHaveLength(1);

    expect(await sweepDeadClaimsAcrossNodes(sql, 60_000, true)).toBe(1);
    expect(await claimsOf(gone.project)).toEqual([]);
    expect((await dueOf(gone.ids))[0]!.due).toBe(true);
    expect(await claimsOf(live.project)).toHaveLength(1);
  });

  it("forgets a silent worker only once it holds no claim", async () => {
    const suffix = randomBytes(4).toString("hex");
    const holding = await claimOf(`holding_${suffix}`, "silent");
    await sql`insert into dispatch.workers (id, process_id, heartbeat_at) values (${`idle_${suffix}`}, 'proc_claims_test', now() - interval '1 hour')`;
    await forgetDeadWorkersAcrossNodes(sql, 60_000);
    const workers = (await sql<{ id: string }[]>`select id from dispatch.workers where id like ${`%_${suffix}`}`).map((row) => row.id);
    expect(workers).toEqual([`holding_${suffix}`]);
    expect(await claimsOf(holding.project)).toHaveLength(1);
  });
});

it("distributes the claims of a database distributed before they were, releasing those it cannot place", async () => {
  const { project, ids } = await dueMessages(1);
  // The claims as a database distributed before had them: the coordinator's own table (Citus cannot
  // undistribute a table with an identity column, so it is made again).
  await sql`drop table dispatch.claims`;
  await sql`
    create table dispatch.claims (id bigint generated always as identity primary key, worker_id text not null,
      message_ids text[] not null, claimed_at timestamptz not null default now(), project text)`;
  // A claim as the build before took it: registered on the coordinator, naming no project.
  await sql`update dispatch.messages set due_at = null, claim_id = 7 where project = ${project}`;
  await sql`insert into dispatch.claims (id, worker_id, message_ids) overriding system value values (7, 'old-build', ${ids})`;

  expect(await migrate(url)).toBe(true);
  const [claims] = await sql<{ column: string }[]>`
    select column_to_column_name(logicalrelid, partkey) as column from pg_dist_partition where logicalrelid = 'dispatch.claims'::regclass`;
  expect(claims).toEqual({ column: "project" });
  expect(await sql`select id from dispatch.claims where worker_id = 'old-build'`).toEqual([]);
  expect(await dueOf(ids)).toEqual([{ id: ids[0], due: true, claimId: 7 }]);
});
