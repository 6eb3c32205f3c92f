/**
 * Secrets at rest (README "Security"): the generated token, the generated
 * signing keys and the redaction key are sealed under DISPATCH_SECRET, so a
 * copy of the database (a dump, a replica, a BI role's SELECT) holds none of
 * them; configured signing keys are never stored; rows an earlier version kept
 * in plaintext are sealed at the next start with a secret; a wrong secret is
 * refused at start, and none makes the service warn.
 */
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Sql } from "../src/db/client";
import { SecretBox } from "../src/domain/secrets/secret-box";
import { cloneDatabase } from "./support/database";
import { dashboardSession } from "./support/dashboard-session";
import { request, servicePool, TEST_SECRET, type TestService } from "./support/service";

const services = servicePool();
afterEach(services.stopAll);

/** Every row of every table of the `dispatch` schema as text: what a dump of it holds. */
async function dumpOf(sql: Sql): Promise<string> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables where table_schema = 'dispatch' and table_type = 'BASE TABLE'`;
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await sql<{ row: string }[]>`select row_to_json(t)::text as row from ${sql("dispatch")}.${sql(name)} t`;
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join("\n");
}

const settingsOf = async (sql: Sql) =>
  Object.fromEntries((await sql<{ key: string; value: unknown }[]>`select key, value from dispatch.settings`).map((row) => [row.key, row.value]));

/** A service that generates its token (none configured). */
const generating = (databaseUrl: string, secret: string | null, lines: string[] = []) =>
  services.start({ tokens: [], secret }, { databaseUrl, log: (line) => lines.push(line) });

const withToken = (service: TestService, token: string) => (path: string) =>
  request(`${service.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });

describe("secrets at rest", () => {
  it("a copy of the database holds none of the generated token, signing keys and redaction key, nor a session's cookie", async () => {
    const lines: string[] = [];
    const service = await generating(await cloneDatabase(), TEST_SECRET, lines);
    const [token] = service.service.tokens;
    const keys = service.service.signingKeys;
    const session = await dashboardSession(service.baseUrl, token);
    const redactionKey = SecretBox.sealingWith(TEST_SECRET).open<string>("redaction_key", (await settingsOf(service.service.sql)).redaction_key);

    const dump = await dumpOf(service.service.sql);
    for (const secret of [token!, keys.current, keys.next, redactionKey, session.cookie.split("=")[1]!]) {
      expect(secret.length).toBeGreaterThan(20);
      expect(dump).not.toContain(secret);
    }
    expect(dump).toMatch(/"sealed": ?"v1\./);
    expect(lines.join("\n")).not.toContain("DISPATCH_SECRET is not set");
    // Sealed, yet the service works with them: the token is accepted and the keys are served.
    expect((await withToken(service, token!)("/v2/keys")).status).toBe(200);
  });

  it("configured signing keys are not copied into the database; the copy an earlier version kept is removed", async () => {
    const databaseUrl = await cloneDatabase();
    const configured = { current: "sig_configuredCurrentKey00000000000", next: "sig_configuredNextKey000000000000000" };
    const first = await services.start({ secret: TEST_SECRET }, { databaseUrl });
    // What an earlier version stored when keys were configured: the keys themselves.
    await first.service.sql`update dispatch.settings set value = ${first.service.sql.json(configured)} where key = 'signing_keys'`;
    await services.stopAll();

    const service = await services.start({ secret: TEST_SECRET, currentSigningKey: configured.current, nextSigningKey: configured.next }, { databaseUrl });
    expect(await (await service.api("/v2/keys")).json()).toEqual(configured);
    const dump = await dumpOf(service.service.sql);
    expect(dump).not.toContain(configured.current);
    expect(dump).not.toContain(configured.next);
  });

  it("an upgrade from plaintext rows seals them at the first start with a secret, keeping the token, keys and sessions' refusal", async () => {
    const databaseUrl = await cloneDatabase();
    const before: string[] = [];
    const plain = await generating(databaseUrl, null, before);
    expect(before.join("\n")).toContain("DISPATCH_SECRET is not set");
    const [token] = plain.service.tokens;
    const keys = plain.service.signingKeys;
    await dashboardSession(plain.baseUrl, token);
    const stored = await settingsOf(plain.service.sql);
    expect(stored.access_token).toBe(token);
    expect(stored.signing_keys).toEqual(keys);
    expect(typeof stored.dashboard_session_key).toBe("string");
    // A cookie as the earlier version's sessions were made: digest.role.expiry.signature under the stored key.
    const payload = `${createHmac("sha256", "x").update(token!).digest("base64url")}.full.${Date.now() + 3_600_000}`;
    const oldCookie = `dispatch_session=${payload}.${createHmac("sha256", Buffer.from(stored.dashboard_session_key as string, "hex")).update(payload).digest("base64url")}`;
    await services.stopAll();

    const after: string[] = [];
    const sealed = await generating(databaseUrl, TEST_SECRET, after);
    expect(after.join("\n")).toContain("sealed 3 stored secrets an earlier version kept unencrypted");
    expect(sealed.service.tokens).toEqual([token]);
    expect(sealed.service.signingKeys).toEqual(keys);
    const settings = await settingsOf(sealed.service.sql);
    expect(settings.dashboard_session_key).toBeUndefined();
    for (const key of ["access_token", "signing_keys", "redaction_key"]) expect(settings[key]).toEqual({ sealed: expect.stringMatching(/^v1\./) });
    const dump = await dumpOf(sealed.service.sql);
    for (const secret of [token!, keys.current, keys.next]) expect(dump).not.toContain(secret);
    expect((await withToken(sealed, token!)("/v2/keys")).status).toBe(200);
    const page = await fetch(`${sealed.baseUrl}/dashboard`, { headers: { cookie: oldCookie }, redirect: "manual" });
    expect(page.status).toBe(303);
  });

  it("a start with another secret is refused, saying which", async () => {
    const databaseUrl = await cloneDatabase();
    await generating(databaseUrl, TEST_SECRET);
    await services.stopAll();
    await expect(generating(databaseUrl, "another-secret-0123456789-0123456789")).rejects.toThrow(
      /DISPATCH_SECRET does not open the stored secret \w+: it was sealed with another secret/,
    );
    await expect(generating(databaseUrl, null)).rejects.toThrow(/is sealed: set DISPATCH_SECRET/);
  });
});
