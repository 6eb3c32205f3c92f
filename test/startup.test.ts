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
import { killAllDispatchProcesses, startDispatchProcess } from "./support/processes";
import { type Receiver, startReceiver } from "./support/receiver";
import { cloneDatabase } from "./support/database";
import { messageState, setting } from "./support/rows";
import { request, startTestService } from "./support/service";

const dataDir = mkdtempSync(join(tmpdir(), "dispatch-start-"));
chmodSync(dataDir, 0o755);

afterEach(() => killAllDispatchProcesses());
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const banner = (output: string) => ({
  url: output.match(/URL:\s+(\S+)/)?.[1],
  token: output.match(/Token:\s+(\S+)/)?.[1],
  current: output.match(/Current signing key:\s+(\S+)/)?.[1],
  next: output.match(/Next signing key:\s+(\S+)/)?.[1],
});

describe("dispatch start", () => {
  it("starts on an embedded database, prints URL, token, keys and a curl, and keeps them across restarts", async () => {
    const first = await startDispatchProcess("all", { DISPATCH_DATA_DIR: dataDir });
    const printed = banner(first.output());
    expect(printed.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed.current).toMatch(/^sig_/);
    expect(printed.next).toMatch(/^sig_/);
    expect(first.output()).toContain("curl -X POST");
    const credentials = JSON.parse(Buffer.from(printed.token!, "base64").toString());
    expect(credentials.UserID).toEqual(expect.any(String));

    const receiver: Receiver = await startReceiver();
    try {
      const response = await request(`${printed.url}/v2/publish/${receiver.url}/hello`, {
        method: "POST",
        headers: { Authorization: `Bearer ${printed.token}` },
        body: "hi",
      });
      expect(response.status).toBe(200);
      await receiver.waitFor(1);
    } finally {
      await receiver.close();
    }
    expect(await first.terminate(), first.output()).toBe(0);

    const second = await startDispatchProcess("all", { DISPATCH_DATA_DIR: dataDir });
    expect(banner(second.output())).toMatchObject({ token: printed.token, current: printed.current, next: printed.next });
    expect(await second.terminate(), second.output()).toBe(0);
  });

  it("refuses a bad configuration with a message naming the variable", async () => {
    await expect(startDispatchProcess("all", { PORT: "eighty" }, 10_000)).rejects.toThrow(/PORT must be a whole number/);
    expect(() => loadConfig({ DISPATCH_DEDUPLICATION_WINDOW: "ten minutes" })).toThrow(ConfigError);
    expect(() => loadConfig({ DISPATCH_CURRENT_SIGNING_KEY: "sig_only_one" })).toThrow(/must be set together/);
    expect(() => loadConfig({ DISPATCH_TOKEN: "short" })).toThrow(/DISPATCH_TOKEN each token must have at least 16/);
    expect(loadConfig({ DISPATCH_TOKEN: "aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb" }).tokens).toHaveLength(2);
    for (const pace of ["0", "1.5", "a tenth"]) expect(() => loadConfig({ DISPATCH_RETENTION_PACE: pace })).toThrow(/DISPATCH_RETENTION_PACE must/);
    expect(loadConfig({ DISPATCH_RETENTION_PACE: "0.25" }).retentionPace).toBe(0.25);
    expect(loadConfig({}).retentionPace).toBe(0.1);
  });

  it("uses configured signing keys and tokens on an external database", async () => {
    const databaseUrl = await cloneDatabase();
    const keys = { currentSigningKey: "sig_configuredcurrent000000000", nextSigningKey: "sig_configurednext00000000000" };
    const service = await startTestService(keys, { databaseUrl });
    try {
      expect(service.service.signingKeys).toEqual({ current: keys.currentSigningKey, next: keys.nextSigningKey });
      expect(await setting(service, "signing_keys")).toEqual({ current: keys.currentSigningKey, next: keys.nextSigningKey });
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
