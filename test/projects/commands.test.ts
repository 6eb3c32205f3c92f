/**
 * `dispatch project create|list|delete`, `dispatch env --project` and
 * `dispatch token create --project`, run through the CLI's own reading of
 * its arguments (in this process; test/commands.test.ts runs the binary)
 * beside a running service: a created project's four `.env` lines work at
 * once with the official client and Receiver, and deleting it ends its
 * token and data.
 */
import { Client, Receiver } from "@upstash/qstash";
import { expect, it } from "vitest";
import { poll } from "../support/poll";
import { runDispatchHere } from "../support/processes";
import { useReceiver } from "../support/receiver";
import { request, useDispatch } from "../support/service";

const dispatch = useDispatch();
const receiver = useReceiver();
const cli = (...args: string[]) => runDispatchHere(args, { DATABASE_URL: dispatch.config.databaseUrl ?? "" });

/** The `NAME=value` lines of a command's output. */
const envOf = (text: string) => Object.fromEntries(text.split("\n").filter((line) => /^QSTASH_\w+=/.test(line)).map((line) => line.split(/=(.*)/s).slice(0, 2)));

it("creates a project whose printed variables work at once with the official client and Receiver, and prints them again", async () => {
  const created = await cli("project", "create", "acme");
  expect(created.code, created.stderr).toBe(0);
  const env = envOf(created.stdout);
  expect(Object.keys(env)).toEqual(["QSTASH_URL", "QSTASH_TOKEN", "QSTASH_CURRENT_SIGNING_KEY", "QSTASH_NEXT_SIGNING_KEY"]);
  const again = await cli("env", "--project", "acme");
  expect(again.code, again.stderr).toBe(0);
  expect(envOf(again.stdout)).toEqual(env);

  const client = new Client({ baseUrl: dispatch.baseUrl, token: env.QSTASH_TOKEN, retry: false });
  // The API process takes a new token up on its NOTIFY: the first call may come just before.
  const { messageId } = await poll(() => client.publish({ url: `${receiver.url}/acme`, body: "hello", retries: 0 }).catch(() => undefined), "the new token to be accepted");
  const [got] = await receiver.waitFor(1);
  const verifier = new Receiver({ currentSigningKey: env.QSTASH_CURRENT_SIGNING_KEY!, nextSigningKey: env.QSTASH_NEXT_SIGNING_KEY! });
  await expect(verifier.verify({ signature: got!.headers["upstash-signature"] as string, body: "hello", url: `${receiver.url}/acme` })).resolves.toBe(true);
  // The message is acme's.
  expect(await dispatch.service.sql`select project from dispatch.messages where id = ${messageId}`).toEqual([{ project: "acme" }]);

  const listed = await cli("project", "list");
  expect(listed.stdout).toMatch(/^acme \(created .*; 1 stored tokens; 0 pending messages\)$/m);
  expect(listed.stdout).toMatch(/^default \(/m);
});

it("makes tokens of a project, and refuses an unknown project, a bad name and a second project of one name", async () => {
  const made = await cli("token", "create", "--project", "acme", "--name", "acme-reader", "--readonly");
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout).toContain("created access token acme-reader (read-only, project acme)");
  expect((await cli("token", "list")).stdout).toContain("acme-reader (read-only, project acme,");
  const unknown = await cli("token", "create", "--project", "nope");
  expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'no project is named "nope" (dispatch project list shows them)']);
  expect((await cli("project", "create", "acme")).code).toBe(1);
  const bad = await cli("project", "create", "Not A Name");
  expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining("invalid project name")]);
  expect((await cli("project", "create")).code).toBe(2);
});

it("deletes a project only when forced while it holds pending messages; its token stops working and its rows go", async () => {
  const env = envOf((await cli("env", "--project", "acme")).stdout);
  const acme = (path: string, init: RequestInit = {}) =>
    request(`${dispatch.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${env.QSTASH_TOKEN}`, ...(init.headers as Record<string, string>) } });
  const delayed = await acme(`/v2/publish/${receiver.url}/later`, { method: "POST", headers: { "Upstash-Delay": "1h" }, body: "later" });
  expect(delayed.status).toBe(200);
  const refused = await cli("project", "delete", "acme");
  expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("holds 1 pending messages")]);
  expect((await cli("project", "delete", "default", "--force")).code).toBe(1);

  const deleted = await cli("project", "delete", "acme", "--force");
  expect(deleted.code, deleted.stderr).toBe(0);
  await poll(async () => (await acme("/v2/queues")).status === 401, "the deleted project's token to be refused");
  const sql = dispatch.service.sql;
  const left = await sql`
    select 'messages' from dispatch.messages where project = 'acme'
    union all select 'tokens' from dispatch.access_tokens where project = 'acme'
    union all select key from dispatch.settings where key like '%:acme'`;
  expect(left).toEqual([]);
  expect((await cli("project", "list")).stdout).not.toContain("acme");
});
