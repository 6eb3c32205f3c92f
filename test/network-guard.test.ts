/**
 * With the private-network guard on, internal destinations are refused before
 * any byte is sent, and the refusal is a failed attempt with a clear error.
 * Only loopback is ever contacted; other ranges are unit-tested on addresses.
 */
import { describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { startReceiver, useReceiver } from "./support/receiver";
import { messageEvents } from "./support/rows";
import { startTestService, type TestService, useDispatch } from "./support/service";

const guarded = useDispatch({ allowPrivateNetworks: false });
const receiver = useReceiver();

function finalEvents(service: TestService, messageId: string) {
  return poll(async () => {
    const rows = await messageEvents(service, messageId);
    return ["FAILED", "DELIVERED"].includes(rows.at(-1)?.state ?? "") && rows;
  }, `message ${messageId} to finish`);
}

describe("private-network guard", () => {
  it.each([
    ["127.0.0.1", () => `http://127.0.0.1:${receiver.port}/x`],
    ["[::1]", () => `http://[::1]:${receiver.port}/x`],
    ["a host name resolving to loopback", () => `http://localhost:${receiver.port}/x`],
  ])("refuses %s and nothing reaches it", async (_name, url) => {
    const response = await guarded.api(`/v2/publish/${url()}`, { method: "POST", headers: { "Svc-Retries": "0" } });
    expect(response.status).toBe(200);
    const { messageId } = await response.json();
    const log = await finalEvents(guarded, messageId);
    expect(log.map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "FAILED"]);
    expect(log[2]!.error).toMatch(/internal address/);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe("redirects", () => {
  it("are never followed: a 3xx is a failed attempt and the target gets nothing", async () => {
    const open = await startTestService();
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 302, headers: { Location: `${target.url}/stolen` } }));
    try {
      const response = await open.api(`/v2/publish/${redirecting.url}/start`, {
        method: "POST",
        headers: { "Svc-Retries": "0" },
      });
      const { messageId } = await response.json();
      const log = await finalEvents(open, messageId);
      expect(log.at(-1)!.state).toBe("FAILED");
      expect(log.find((e) => e.state === "ERROR")!.error).toMatch(/status 302/);
      expect(redirecting.requests).toHaveLength(1);
      expect(target.requests).toHaveLength(0);
    } finally {
      await open.stop();
      await target.close();
      await redirecting.close();
    }
  });
});
