/**
 * Backup and restore with standard tooling (README "Backup and restore"):
 * `pg_dump -Fc` of a database under publishing load, `pg_restore --no-owner`
 * into a new database as another role, and Dispatch started on the copy:
 * every message pending in the dump is delivered, the claims of the processes
 * that ran when it was taken are swept with their rows, and nothing stays
 * claimed or due.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { PENDING_STATES } from "../../src/db/vocabulary";
import { poll } from "../support/poll";
import { type Receiver, startReceiver } from "../support/receiver";
import { startTestService } from "../support/service";
import { run } from "./support/machine";
import { type PrivateServer, startPrivateServer } from "./support/server";

let server: PrivateServer;
let receiver: Receiver;
let dumpDir: string;

beforeAll(async () => {
  server = await startPrivateServer();
  receiver = await startReceiver();
  dumpDir = mkdtempSync(join(tmpdir(), "dispatch-dump-"));
});
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
  rmSync(dumpDir, { recursive: true, force: true });
});

/** Runs `statement` as the server's superuser on `database`. */
async function asSuperuser(statement: string, database = "postgres"): Promise<void> {
  const admin = createSql(server.url(database), 1);
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}

/** `pg_dump -Fc` of `database` to `file`, run while the caller goes on publishing. */
function dump(database: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(server.installation, "bin", "pg_dump"), ["-Fc", "-f", file, server.url(database)], { stdio: ["ignore", "ignore", "pipe"] });
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk));
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`pg_dump failed: ${errors}`))));
  });
}

describe("pg_dump under load, pg_restore into a new database as another role", () => {
  it("delivers every message pending in the dump and leaves nothing claimed", async () => {
    await asSuperuser("create database original");
    // Slow answers keep deliveries in flight (claimed) while the dump is taken.
    receiver.respond(() => ({ status: 200, body: "ok", delayMs: 300 }));
    const original = await startTestService({ databaseUrl: server.url("original"), delayScale: 0.01 });
    const published: string[] = [];
    let publishing = true;
    const publisher = (async () => {
      for (let index = 0; publishing; index++) {
        // Immediate ones, delayed ones (100 s scaled to 1 s), and some for a paused queue.
        const path = index % 5 === 0 ? `/v2/enqueue/held/${receiver.url}/backup-${index}` : `/v2/publish/${receiver.url}/backup-${index}`;
        const headers: Record<string, string> = index % 5 === 1 ? { "Svc-Delay": "100s" } : {};
        const answer = await original.api(path, { method: "POST", body: `message ${index}`, headers });
        if (answer.status === 200) published.push((await answer.json()).messageId);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await original.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "held", parallelism: 1 }) });
      await original.api("/v2/queues/held/pause", { method: "POST" });
      await poll(() => published.length > 150, "publishing under way");
      await dump("original", join(dumpDir, "original.dump"));
      await poll(() => published.length > 300, "publishing after the dump");
    } finally {
      publishing = false;
      await publisher;
      await original.stop();
    }

    // The copy belongs to another role, as a restore into another account's database would.
    await asSuperuser("create role restorer login password 'restorer'");
    await asSuperuser("create database copy owner restorer");
    run(join(server.installation, "bin", "pg_restore"), ["--no-owner", "--role=restorer", "-d", server.url("copy"), join(dumpDir, "original.dump")]);
    const admin = createSql(server.url("copy"), 1);
    try {
      const pending = (await admin<{ id: string }[]>`select id from dispatch.messages where state = any(${PENDING_STATES}::text[])`).map((row) => row.id);
      const [held] = await admin<{ claims: number; workers: number }[]>`
        select (select count(*) from dispatch.claims)::int as claims, (select count(*) from dispatch.workers)::int as workers`;
      expect(pending.length).toBeGreaterThan(0);
      // The dump caught deliveries in flight and the processes that held them.
      expect(held!.claims).toBeGreaterThan(0);
      expect(held!.workers).toBeGreaterThan(0);

      receiver.respond(() => ({ status: 200, body: "ok" }));
      const before = receiver.requests.length;
      const copy = await startTestService({
        databaseUrl: `postgres://restorer:restorer@127.0.0.1:${server.port}/copy?sslmode=disable`,
        delayScale: 0.01,
      });
      try {
        await copy.api("/v2/queues/held/resume", { method: "POST" });
        const arrived = () => new Set(receiver.requests.slice(before).map((request) => request.headers["svc-message-id"] as string));
        await poll(() => pending.every((id) => arrived().has(id)), async () => {
          const missing = pending.filter((id) => !arrived().has(id));
          return `every message pending in the dump (${missing.length} of ${pending.length} missing, e.g. ${missing[0]})`;
        }, 40_000);
        // Nothing stays due or claimed, and the old processes' rows are gone.
        await poll(async () => {
          const [row] = await admin<{ pending: number; claims: number; stale: number }[]>`
            select (select count(*) from dispatch.messages where state = any(${PENDING_STATES}::text[]))::int as pending,
                   (select count(*) from dispatch.claims)::int as claims,
                   (select count(*) from dispatch.workers where heartbeat_at < now() - interval '10 seconds')::int as stale`;
          return row!.pending === 0 && row!.claims === 0 && row!.stale === 0;
        }, "no message pending, no claim, no dead process's row", 30_000);
        // Messages accepted after the dump are not in the copy.
        const [after] = await admin<{ n: number }[]>`select count(*)::int as n from dispatch.messages where id = any(${published.slice(-20)}::text[])`;
        expect(after!.n).toBe(0);
      } finally {
        await copy.stop();
      }
    } finally {
      await admin.end();
    }
  });
});
