/**
 * The operator's commands, run as the real CLI: `dispatch migrate` migrates an
 * empty database and exits; `dispatch token` and `dispatch keys` print what is
 * in force; `dispatch keys rotate` rotates generated keys and refuses
 * configured ones; arguments the CLI does not take exit 2 with the usage.
 * (`dispatch token create|list|revoke`: access-tokens.test.ts.)
 */
import { randomBytes } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { createSql } from "../src/db/client";
import { cloneDatabase } from "./support/database";
import { TEST_DATABASE_PREFIX, withDatabase } from "./support/global-setup";
import { runDispatch as dispatch } from "./support/processes";

async function emptyDatabase(): Promise<string> {
  const adminUrl = inject("adminUrl");
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString("hex")}`;
  const admin = createSql(adminUrl, 1);
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return withDatabase(adminUrl, name);
}

describe("dispatch commands", () => {
  it("migrate applies the migrations to an empty database and exits", async () => {
    const url = await emptyDatabase();
    const result = await dispatch(["migrate"], { DATABASE_URL: url });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("migrations applied");
    const sql = createSql(url, 1);
    try {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from dispatch.__drizzle_migrations`;
      expect(row!.n).toBeGreaterThan(10);
      expect(await sql`select 1 from graphile_worker.migrations limit 1`).toHaveLength(1);
    } finally {
      await sql.end();
    }
  });

  it("token prints the generated token, the same every time, or the configured ones", async () => {
    const url = await cloneDatabase();
    const first = await dispatch(["token"], { DATABASE_URL: url });
    expect(first.code, first.stderr).toBe(0);
    const token = first.stdout.trim();
    expect(JSON.parse(Buffer.from(token, "base64").toString()).UserID).toEqual(expect.any(String));
    expect((await dispatch(["token"], { DATABASE_URL: url })).stdout.trim()).toBe(token);
    const configured = await dispatch(["token"], { DATABASE_URL: url, DISPATCH_TOKEN: "first-token-0123456789,second-token-0123456789" });
    expect(configured.stdout.trim().split("\n")).toEqual(["first-token-0123456789", "second-token-0123456789"]);
  });

  it("keys prints the signing keys; keys rotate makes next the current one", async () => {
    const url = await cloneDatabase();
    const parse = (text: string) => ({ current: text.match(/current:\s+(\S+)/)?.[1], next: text.match(/next:\s+(\S+)/)?.[1] });
    const before = parse((await dispatch(["keys"], { DATABASE_URL: url })).stdout);
    expect(before.current).toMatch(/^sig_/);
    const rotated = await dispatch(["keys", "rotate"], { DATABASE_URL: url });
    expect(rotated.code, rotated.stderr).toBe(0);
    const after = parse(rotated.stdout);
    expect(after.current).toBe(before.next);
    expect(after.next).toMatch(/^sig_/);
    expect(parse((await dispatch(["keys"], { DATABASE_URL: url })).stdout)).toEqual(after);

    const configured = await dispatch(["keys", "rotate"], {
      DATABASE_URL: url,
      DISPATCH_CURRENT_SIGNING_KEY: "sig_configuredCurrent000000000000",
      DISPATCH_NEXT_SIGNING_KEY: "sig_configuredNext00000000000000",
    });
    expect(configured.code).toBe(1);
    expect(configured.stdout + configured.stderr).toMatch(/DISPATCH_CURRENT_SIGNING_KEY/);
  });

  it.each([["help"], ["--help"], ["-h"]])("dispatch %s prints the usage to stdout and exits 0", async (arg) => {
    const result = await dispatch([arg], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: dispatch start/);
    expect(result.stdout).toMatch(/dispatch help +print this/);
  });

  it("an unknown command prints the usage and exits 2", async () => {
    const result = await dispatch(["frobnicate"], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/dispatch migrate/);
    expect(result.stderr).toMatch(/dispatch token revoke NAME/);
  });

  it.each([
    [["token", "revoke"], /takes one token name/],
    [["token", "revoke", "a", "b"], /takes one token name/],
    [["token", "create", "extra"], /takes options .*, not extra/],
    [["token", "create", "--name"], /argument missing/],
    [["token", "create", "--bogus"], /Unknown option '--bogus'/],
    [["token", "list", "--readonly"], /--name and --readonly go with dispatch token create/],
    [["keys", "--name", "x"], /--name and --readonly go with dispatch token create/],
  ])("dispatch %j says what is wrong, prints the usage and exits 2", async (args, message) => {
    const result = await dispatch(args, {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/usage: dispatch start/);
  });
});
