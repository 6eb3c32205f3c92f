/**
 * DISPATCH_QSTASH_DEV (src/config/qstash-dev.ts): the settings it makes, and
 * where it is refused. The credentials are checked against the installed
 * @upstash/qstash, whose dev mode they must match.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config";
import { QSTASH_DEV_CREDENTIALS } from "../../src/config/qstash-dev";

describe("DISPATCH_QSTASH_DEV", () => {
  it("starts with the SDKs' development token and keys, the compat dialect, and this machine reachable", () => {
    const config = loadConfig({ DISPATCH_QSTASH_DEV: "true" });
    expect(config).toMatchObject({
      qstashDev: true,
      tokens: [QSTASH_DEV_CREDENTIALS.token],
      currentSigningKey: QSTASH_DEV_CREDENTIALS.currentSigningKey,
      nextSigningKey: QSTASH_DEV_CREDENTIALS.nextSigningKey,
      defaultDialect: "upstash",
      allowPrivateNetworks: true,
    });
    expect(loadConfig({ DISPATCH_QSTASH_DEV: "true", HOST: "127.0.0.1" }).qstashDev).toBe(true);
    expect(loadConfig({ DISPATCH_QSTASH_DEV: "true", HOST: "::1" }).qstashDev).toBe(true);
  });

  it("uses exactly the credentials the installed SDK's dev mode uses", () => {
    const sdk = readFileSync(createRequire(import.meta.url).resolve("@upstash/qstash"), "utf8");
    for (const value of Object.values(QSTASH_DEV_CREDENTIALS)) expect(sdk).toContain(`"${value}"`);
  });

  it("is refused with a configured database, a listener others reach, or credentials of its own", () => {
    const refused = (env: Record<string, string>) => () => loadConfig({ DISPATCH_QSTASH_DEV: "true", ...env });
    expect(refused({ DATABASE_URL: "postgres://db.example/dispatch" })).toThrow(/embedded database only: unset DATABASE_URL/);
    expect(refused({ HOST: "0.0.0.0" })).toThrow(/listens on loopback only: unset HOST or set it to 127.0.0.1 \(got 0.0.0.0\)/);
    expect(refused({ DISPATCH_TOKEN: "my-own-token-0123456789" })).toThrow(/unset DISPATCH_TOKEN/);
    const keys = { DISPATCH_CURRENT_SIGNING_KEY: "sig_".padEnd(32, "a"), DISPATCH_NEXT_SIGNING_KEY: "sig_".padEnd(32, "b") };
    expect(refused(keys)).toThrow(ConfigError);
    expect(loadConfig({ DISPATCH_QSTASH_DEV: "false" }).tokens).toEqual([]);
  });
});
