/**
 * The newcomer's path: `dispatch start` on an empty folder starts an embedded
 * Postgres, prints what to use, survives a restart with the same token and
 * keys, and shuts down gracefully on SIGTERM.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config";
import { createSql } from "../src/db/client";
import { killAllDispatchProcesses, runDispatch, startDispatchProcess } from "./support/processes";
import { type Receiver, startReceiver } from "./support/receiver";
import { cloneDatabase } from "./support/database";
import { messageState, setting } from "./support/rows";
import { request, startTestService } from "./support/service";

const dataDir = mkdtempSync(join(tmpdir(), "dispatch-start-"));
chmodSync(dataDir, 0o755);

afterEach(() => killAllDispatchProcesses());
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The banner's URL, and the secrets `dispatch env` prints (a banner on no terminal shows none). */
async function printed(output: string, env: Record<string, string>) {
  expect(output).toMatch(/Token:\s+\(not shown: npx dispatch env prints it\)/);
  expect(output).toMatch(/Current signing key:\s+\(not shown/);
  const lines = (await runDispatch(["env"], env)).stdout;
  const value = (name: string) => lines.match(new RegExp(`^${name}=(\\S+)$`, "m"))?.[1];
  return { url: output.match(/URL:\s+(\S+)/)?.[1], token: value("QSTASH_TOKEN"), current: value("QSTASH_CURRENT_SIGNING_KEY"), next: value("QSTASH_NEXT_SIGNING_KEY") };
}

describe("dispatch start", () => {
  it("starts on an embedded database, prints URL and a curl (dispatch env the token and keys), and keeps them across restarts", async () => {
    const first = await startDispatchProcess("all", { DISPATCH_DATA_DIR: dataDir, DISPATCH_ALLOW_PRIVATE_NETWORKS: "true" });
    const shown = await printed(first.output(), { DISPATCH_DATA_DIR: dataDir });
    expect(shown.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(shown.current).toMatch(/^sig_/);
    expect(shown.next).toMatch(/^sig_/);
    expect(first.output()).toContain("curl -X POST");
    const credentials = JSON.parse(Buffer.from(shown.token!, "base64").toString());
    expect(credentials.UserID).toEqual(expect.any(String));

    const receiver: Receiver = await startReceiver();
    try {
      const response = await request(`${shown.url}/v2/publish/${receiver.url}/hello`, {
        method: "POST",
        headers: { Authorization: `Bearer ${shown.token}` },
        body: "hi",
      });
      expect(response.status).toBe(200);
      await receiver.waitFor(1);
    } finally {
      await receiver.close();
    }
    expect(await first.terminate(), first.output()).toBe(0);

    const second = await startDispatchProcess("all", { DISPATCH_DATA_DIR: dataDir, DISPATCH_ALLOW_PRIVATE_NETWORKS: "true" });
    expect(await printed(second.output(), { DISPATCH_DATA_DIR: dataDir })).toMatchObject({ token: shown.token, current: shown.current, next: shown.next });
    expect(await second.terminate(), second.output()).toBe(0);
  });

  it("refuses a bad configuration with a message naming the variable", async () => {
    await expect(startDispatchProcess("all", { PORT: "eighty" }, 10_000)).rejects.toThrow(/PORT must be a whole number/);
    expect(() => loadConfig({ DISPATCH_DEDUPLICATION_WINDOW: "ten minutes" })).toThrow(ConfigError);
    expect(() => loadConfig({ DISPATCH_CURRENT_SIGNING_KEY: "sig_only_one_0123456789_0123456789" })).toThrow(/must be set together/);
    // Secrets shorter than a guess takes: 16 characters for the metrics token, 32 for signing keys and DISPATCH_SECRET.
    expect(() => loadConfig({ DISPATCH_METRICS_TOKEN: "metrics-0123456" })).toThrow(/DISPATCH_METRICS_TOKEN must be at least 16 characters/);
    expect(loadConfig({ DISPATCH_METRICS_TOKEN: "metrics-01234567" }).metricsToken).toBe("metrics-01234567");
    for (const name of ["DISPATCH_CURRENT_SIGNING_KEY", "DISPATCH_NEXT_SIGNING_KEY", "DISPATCH_SECRET"]) {
      expect(() => loadConfig({ [name]: "x".repeat(31) })).toThrow(new RegExp(`${name} must be at least 32 characters`));
    }
    expect(loadConfig({ DISPATCH_SECRET: "x".repeat(32) }).secret).toBe("x".repeat(32));
    expect(() => loadConfig({ DISPATCH_TOKEN: "short" })).toThrow(/DISPATCH_TOKEN each token must have at least 16/);
    expect(loadConfig({ DISPATCH_TOKEN: "aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb" }).tokens).toHaveLength(2);
    for (const pace of ["0", "1.5", "a tenth"]) expect(() => loadConfig({ DISPATCH_RETENTION_PACE: pace })).toThrow(/DISPATCH_RETENTION_PACE must/);
    expect(loadConfig({ DISPATCH_RETENTION_PACE: "0.25" }).retentionPace).toBe(0.25);
    expect(loadConfig({}).retentionPace).toBe(0.1);
    expect(() => loadConfig({ DISPATCH_IDLE_POLL_INTERVAL: "a while" })).toThrow(/DISPATCH_IDLE_POLL_INTERVAL must be a duration/);
    expect(loadConfig({}).idlePollIntervalMs).toBe(1000);
    // Never shorter than the poll it grows from.
    expect(loadConfig({ DISPATCH_IDLE_POLL_INTERVAL: "1s", DISPATCH_POLL_INTERVAL_MS: "5000" }).idlePollIntervalMs).toBe(5000);
  });

  it("uses configured signing keys and tokens on an external database", async () => {
    const databaseUrl = await cloneDatabase();
    const keys = { currentSigningKey: "sig_configuredcurrent000000000", nextSigningKey: "sig_configurednext00000000000" };
    const service = await startTestService(keys, { databaseUrl });
    try {
      expect(service.service.signingKeys).toEqual({ current: keys.currentSigningKey, next: keys.nextSigningKey });
      // Used as given, never copied into the database.
      expect(await setting(service, "signing_keys")).not.toEqual({ current: keys.currentSigningKey, next: keys.nextSigningKey });
      expect(await (await service.api("/v2/keys")).json()).toEqual({ current: keys.currentSigningKey, next: keys.nextSigningKey });
    } finally {
      await service.stop();
    }
  });
});

describe("graceful shutdown", () => {
  it("lets an in-flight delivery finish and records it", async () => {
    const service = await startTestService();
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 1500 }));
    try {
      const response = await service.api(`/v2/publish/${receiver.url}/slow`, { method: "POST" });
      const { messageId } = await response.json();
      await receiver.waitFor(1);
      await service.stop();
      // The service's pool is closed now; read the outcome through a fresh connection.
      const reader = createSql(service.service.databaseUrl, 1);
      const state = await messageState(reader, messageId);
      await reader.end();
      expect(state).toBe("DELIVERED");
    } finally {
      await receiver.close();
    }
  });

  it("hands back an attempt the destination has not answered when the stop's grace runs out, recording nothing", async () => {
    const service = await startTestService();
    // Answers only after the worker's 5 s grace: the attempt is ended by the stop, not by the destination.
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 8000 }));
    try {
      const response = await service.api(`/v2/publish/${receiver.url}/hanging`, { method: "POST", headers: { "Svc-Timeout": "60s" } });
      const { messageId } = await response.json();
      await receiver.waitFor(1);
      await service.stop();
      const reader = createSql(service.service.databaseUrl, 1);
      try {
        const [row] = await reader<{ state: string; due: boolean; attempts: number }[]>`
          select state, due_at is not null as due,
            (select count(*)::int from dispatch.attempts where message_id = ${messageId}) as attempts
          from dispatch.messages where id = ${messageId}`;
        // Back on the work list for the next worker, with no attempt logged and no retry used.
        expect(row).toEqual({ state: "CREATED", due: true, attempts: 0 });
      } finally {
        await reader.end();
      }
    } finally {
      await receiver.close();
    }
  }, 30_000);
});
