/**
 * Access tokens made from the command line, used against a running API:
 * `dispatch token create` prints a token once and the API accepts it at once
 * (a read-only one only reads); `dispatch token list` names every token and
 * shows none of them, each with when the API or the dashboard last accepted
 * it (written at most once a minute per token); after `dispatch token
 * revoke` the API refuses the token
 * (401). The API keeps accepting and refusing the right tokens after its
 * listening connection is cut. A workflow app running on a created token gets
 * webhooks that answer, until the token is revoked. A bad or unknown name is a
 * clear error that changes nothing.
 */
import { describe, expect, it } from "vitest";
import { tokenDigest } from "../src/domain/access-tokens/access-tokens";
import { NOTE_EVERY_MS, TokenUses } from "../src/domain/access-tokens/token-uses";
import { dashboardSession } from "./support/dashboard-session";
import { poll } from "./support/poll";
import { type CommandOutput, runDispatchHere } from "./support/processes";
import { queueNames } from "./support/rows";
import { request, TEST_TOKEN, useDispatch } from "./support/service";
import { startWorkflowApp, waitForReport } from "./support/workflow-app";

const dispatch = useDispatch();

/** `dispatch token <args>` on the running service's database, run in this process (test/commands.test.ts runs the binary). */
const token = (args: string[], env: Record<string, string> = {}): Promise<CommandOutput> =>
  runDispatchHere(["token", ...args], { DATABASE_URL: dispatch.config.databaseUrl!, ...env });

/** Creates a token with `dispatch token create <args>`; returns its name and the token it printed. */
async function create(args: string[]): Promise<{ name: string; secret: string; output: string }> {
  const result = await token(["create", ...args]);
  expect(result.code, result.stderr).toBe(0);
  const [heading, secret] = result.stdout.trim().split("\n");
  return { name: heading!.match(/^created access token (\S+)/)![1]!, secret: secret!, output: result.stdout };
}

/** Calls the API with `secret`. */
const using = (secret: string, path: string, init: RequestInit = {}) =>
  request(`${dispatch.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" } });

/** Waits until `GET /v2/queues` with `secret` answers `status`. */
const untilAnswered = (secret: string, status: number) =>
  poll(async () => (await using(secret, "/v2/queues")).status === status, `GET /v2/queues answering ${status}`);

/** The stored tokens' rows, whole. */
const storedRows = () => dispatch.service.sql`select * from dispatch.access_tokens order by name`;

const createQueue = (secret: string, queueName: string) =>
  using(secret, "/v2/queues", { method: "POST", body: JSON.stringify({ queueName, parallelism: 1 }) });

describe("dispatch token create", () => {
  it("prints a full token once, which the running API accepts at once, for writes too", async () => {
    const { name, secret, output } = await create(["--name", "deploy-bot"]);
    expect(name).toBe("deploy-bot");
    expect(output).toMatch(/created access token deploy-bot \(full\)/);
    expect(output).toMatch(/will not be shown again/);
    // The generator's shape: base64 JSON with a UserID, as the workflow SDK reads it.
    expect(JSON.parse(Buffer.from(secret, "base64").toString()).UserID).toEqual(expect.any(String));
    // At once: the first request after the command printed it, without waiting for the notification.
    expect((await createQueue(secret, "made-by-deploy-bot")).status).toBe(200);
  });

  it("is accepted by a running API before any notification of it arrives (looked up before the 401)", async () => {
    // A row written without the NOTIFY the command sends: only the lookup can find it.
    const secret = `quiet-token-${Date.now()}-0123456789`;
    await dispatch.service.sql`
      insert into dispatch.access_tokens (name, digest, read_only) values ('quiet', sha256(${secret}::bytea), false)`;
    expect((await using(secret, "/v2/queues")).status).toBe(200);
    expect((await using(`${secret}-wrong`, "/v2/queues")).status).toBe(401);
  });

  it("stores the token's digest, never the token", async () => {
    const { name, secret } = await create(["--name", "stored-digest"]);
    const [row] = await dispatch.service.sql`select * from dispatch.access_tokens where name = ${name}`;
    expect(Buffer.from(row!.digest).length).toBe(32);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it("makes a read-only token with --readonly: it reads, and a write answers 403 and changes nothing", async () => {
    const { secret, output } = await create(["--name", "reporting", "--readonly"]);
    expect(output).toMatch(/\(read-only\)/);
    await untilAnswered(secret, 200);
    const before = await queueNames(dispatch);
    const write = await createQueue(secret, "made-by-reporting");
    expect(write.status).toBe(403);
    expect((await write.json()).error).toMatch(/read-only/);
    expect(await queueNames(dispatch)).toEqual(before);
  });

  it("names the token itself when no --name is given", async () => {
    const { name, secret } = await create([]);
    expect(name).toMatch(/^token-[A-Za-z0-9]{8}$/);
    await untilAnswered(secret, 200);
  });
});

describe("dispatch token list", () => {
  it("names every token by its source and access, and prints no token", async () => {
    const created = await create(["--name", "listed", "--readonly"]);
    const env = {
      DISPATCH_TOKEN: "configured-full-0123456789,configured-full-9876543210",
      DISPATCH_READONLY_TOKEN: "configured-readonly-0123456789",
      DISPATCH_METRICS_TOKEN: "configured-metrics-0123456789",
    };
    const result = await token(["list"], env);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "DISPATCH_TOKEN #1 (full, from configuration; last used never)",
      "DISPATCH_TOKEN #2 (full, from configuration; last used never)",
      "DISPATCH_READONLY_TOKEN #1 (read-only, from configuration; last used never)",
      "DISPATCH_METRICS_TOKEN (GET /metrics only, from configuration; last used never)",
    ]);
    expect(lines).toContainEqual(expect.stringMatching(/^listed \(read-only, created \d{4}-\d\d-\d\dT\S+; last used never\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^deploy-bot \(full, created /));
    for (const secret of [...Object.values(env).flatMap((value) => value.split(",")), created.secret, TEST_TOKEN]) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
  });

  it("names the generated token, without printing it, when no DISPATCH_TOKEN is set", async () => {
    const generated = (await token([])).stdout.trim();
    expect(generated).not.toBe("");
    const result = await token(["list"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split("\n")[0]).toBe("generated (full, made on first start; dispatch token prints it; last used never)");
    expect(result.stdout + result.stderr).not.toContain(generated);
  });
});

describe("a token's last use", () => {
  /** The line `dispatch token list` prints for the token named or labelled `name`, with `env`. */
  const listed = async (name: string, env: Record<string, string> = {}) => {
    const result = await token(["list"], env);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout.split("\n").find((line) => line.startsWith(`${name} (`));
  };
  const USED = /; last used \d+ s ago \(\d{4}-\d\d-\d\dT[\d:.]+Z\)\)$/;

  it("is listed: never before the token is used, then when the API or the dashboard last accepted it", async () => {
    const api = await create(["--name", "used-by-api"]);
    const dashboard = await create(["--name", "used-to-sign-in", "--readonly"]);
    expect(await listed("used-by-api")).toMatch(/; last used never\)$/);
    expect((await using(api.secret, "/v2/queues")).status).toBe(200);
    await poll(async () => USED.test((await listed("used-by-api")) ?? ""), "the API's use of used-by-api to be listed");
    expect(await listed("used-to-sign-in")).toMatch(/; last used never\)$/);
    await dashboardSession(dispatch.baseUrl, dashboard.secret);
    await poll(async () => USED.test((await listed("used-to-sign-in")) ?? ""), "the sign-in with used-to-sign-in to be listed");
    // A configured token (the service's), named by its variable.
    expect((await dispatch.api("/v2/queues")).status).toBe(200);
    await poll(async () => USED.test((await listed("DISPATCH_TOKEN #1", { DISPATCH_TOKEN: TEST_TOKEN })) ?? ""), "the configured token's use to be listed");
  });

  it("is written at most once a minute per token, not at each request", async () => {
    const { secret } = await create(["--name", "busy-bot"]);
    const digest = tokenDigest(secret);
    const sql = dispatch.service.sql;
    let now = Date.now();
    const uses = new TokenUses(sql, (error) => {
      throw error;
    }, () => now);
    const row = async () => (await sql<{ lastUsedAt: Date }[]>`
      select last_used_at as "lastUsedAt" from dispatch.access_token_uses where digest = ${digest}`)[0]?.lastUsedAt;
    uses.note(digest);
    await uses.stop();
    expect(await row()).toBeInstanceOf(Date);
    // Two minutes pass in the table, not in the process: a write now would move the time, and none comes within the minute.
    const backdated = new Date((await row())!.getTime() - 2 * NOTE_EVERY_MS);
    await sql`update dispatch.access_token_uses set last_used_at = ${backdated} where digest = ${digest}`;
    for (let request = 0; request < 50; request++) {
      now += 1000;
      uses.note(digest);
    }
    await uses.stop();
    expect(await row()).toEqual(backdated);
    now += NOTE_EVERY_MS;
    uses.note(digest);
    await uses.stop();
    expect((await row())!.getTime()).toBeGreaterThan(backdated.getTime() + NOTE_EVERY_MS);
  });

  it("is forgotten with the token when it is revoked", async () => {
    const { secret } = await create(["--name", "short-lived"]);
    expect((await using(secret, "/v2/queues")).status).toBe(200);
    const digest = tokenDigest(secret);
    const rows = () => dispatch.service.sql`select 1 from dispatch.access_token_uses where digest = ${digest}`;
    await poll(async () => (await rows()).length === 1, "short-lived's use to be written");
    expect((await token(["revoke", "short-lived"])).code).toBe(0);
    expect((await rows()).length).toBe(0);
  });
});

describe("dispatch token revoke", () => {
  it("makes the running API refuse the token (401) and drops it from the list; other tokens still work", async () => {
    const { name, secret } = await create(["--name", "short-lived"]);
    await untilAnswered(secret, 200);
    const revoked = await token(["revoke", name]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/revoked access token short-lived/);
    await untilAnswered(secret, 401);
    expect((await (await using(secret, "/v2/queues")).json()).error).toBe("invalid token");
    expect((await token(["list"])).stdout).not.toMatch(/^short-lived /m);
    expect((await dispatch.api("/v2/queues")).status).toBe(200);
  });

  it("reaches the API after its listening connection was cut, as does a new token", async () => {
    const { name, secret } = await create(["--name", "through-a-reconnect"]);
    await untilAnswered(secret, 200);
    // The app's listening connection (postgres.js's, on the dispatch_* channels), not graphile-worker's.
    const cut = await dispatch.service.sql`
      select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and query like 'listen "dispatch\\_%'`;
    expect(cut.length).toBeGreaterThan(0);
    expect((await token(["revoke", name])).code).toBe(0);
    const fresh = await create(["--name", "after-the-reconnect"]);
    // Well within the 30 s safety net: the listener's reconnection reads the tokens again.
    await untilAnswered(secret, 401);
    await untilAnswered(fresh.secret, 200);
  });
});

describe("a created token's workflow webhooks", () => {
  it("answer for an app that runs on the token (the official SDK builds their URLs from it), and 404 once it is revoked", async () => {
    const { name, secret } = await create(["--name", "workflow-app"]);
    await untilAnswered(secret, 200);
    const seen = new Map<string, unknown>();
    const app = await startWorkflowApp(
      dispatch,
      {
        "/hook": {
          route: async (context) => {
            const webhook = await context.createWebhook("hook");
            seen.set(`url:${context.workflowRunId}`, webhook.webhookUrl);
            const { request: called } = await context.waitForWebhook("wait", webhook, "30s");
            seen.set(`called:${context.workflowRunId}`, await called?.text());
          },
        },
      },
      { token: secret },
    );
    try {
      const userId = JSON.parse(Buffer.from(secret, "base64").toString()).UserID as string;
      const { workflowRunId } = await app.client.trigger({ url: app.url("/hook") });
      const url = await waitForReport<string>(seen, `url:${workflowRunId}`);
      expect(url).toBe(`${dispatch.baseUrl}/v2/workflows/hooks/${userId}/${workflowRunId}/${new URL(url).pathname.split("/").at(-1)}`);
      expect((await request(url, { method: "POST", body: "from a third party" })).status).toBe(200);
      expect(await waitForReport(seen, `called:${workflowRunId}`)).toBe("from a third party");

      expect((await token(["revoke", name])).code).toBe(0);
      // The run ends once its webhook was called, which answers 404 too ("... has ended"): the revocation's
      // own answer is waited for, not any 404.
      const revoked = async () => {
        const response = await request(url, { method: "POST", body: "after the revocation" });
        return { status: response.status, error: (await response.json()).error as string };
      };
      await poll(async () => (await revoked()).error === "unknown webhook", "the revoked token's webhook to be unknown");
      expect(await revoked()).toEqual({ status: 404, error: "unknown webhook" });
    } finally {
      await app.close();
    }
  });
});

describe("bad input", () => {
  it("a bad, taken or unknown name is a clear error (exit 1) and changes no token", async () => {
    await create(["--name", "taken"]);
    const before = await storedRows();
    const refusals: [string[], RegExp][] = [
      [["create", "--name", "has space"], /invalid token name "has space": use 1-100 letters, digits/],
      [["create", "--name", "x".repeat(101)], /invalid token name/],
      [["create", "--name", ""], /invalid token name ""/],
      [["create", "--name", "taken"], /an access token named taken already exists/],
      [["revoke", "no-such-token"], /no stored access token is named "no-such-token"/],
      [["revoke", "DISPATCH_TOKEN #1"], /no stored access token is named "DISPATCH_TOKEN #1"/],
    ];
    const results = await Promise.all(refusals.map(([args]) => token(args)));
    for (const [index, [args, message]] of refusals.entries()) {
      const result = results[index]!;
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr, args.join(" ")).toMatch(message);
    }
    expect(await storedRows()).toEqual(before);
  });
});
