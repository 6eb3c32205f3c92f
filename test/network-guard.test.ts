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
    ["169.254.169.254 (cloud metadata)", () => "http://169.254.169.254/latest/meta-data/"],
    ["[2002:7f00:1::] (6to4 of 127.0.0.1)", () => `http://[2002:7f00:1::]:${receiver.port}/x`],
    ["[::ffff:0:7f00:1] (IPv4-translated 127.0.0.1)", () => `http://[::ffff:0:7f00:1]:${receiver.port}/x`],
  ])("refuses the IP literal %s at publish with a 400, storing nothing", async (_name, url) => {
    const before = await guarded.service.sql<{ n: number }[]>`select count(*)::int as n from dispatch.messages`;
    const response = await guarded.api(`/v2/publish/${url()}`, { method: "POST", body: "x" });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(/^destination \S+ is not a public address \(the SSRF guard .*DISPATCH_ALLOW_PRIVATE_NETWORKS=true/);
    const after = await guarded.service.sql<{ n: number }[]>`select count(*)::int as n from dispatch.messages`;
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it("refuses a callback, a failure callback and a URL-group endpoint at such an address with a 400", async () => {
    for (const [header, what] of [["Svc-Callback", "callback"], ["Svc-Failure-Callback", "failure callback"]] as const) {
      const response = await guarded.api(`/v2/publish/https://example.com/hook`, { method: "POST", headers: { [header]: "http://192.168.1.1/cb" } });
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatch(new RegExp(`^${what} 192\\.168\\.1\\.1 is not a public address`));
    }
    const group = await guarded.api("/v2/topics/guarded-group/endpoints", {
      method: "POST",
      body: JSON.stringify({ endpoints: [{ url: "http://[fd00::1]/x" }] }),
    });
    expect(group.status).toBe(400);
    expect((await group.json()).error).toMatch(/^endpoint url fd00::1 is not a public address/);
  });

  it("refuses a host name resolving to loopback when it is resolved: the attempt fails unsent, its error names no address", async () => {
    const response = await guarded.api(`/v2/publish/http://localhost:${receiver.port}/x`, { method: "POST", headers: { "Svc-Retries": "0" } });
    expect(response.status).toBe(200);
    const { messageId } = await response.json();
    const log = await finalEvents(guarded, messageId);
    expect(log.map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "FAILED"]);
    expect(log[2]!.error).toMatch(/^destination localhost refused: it is not, or does not resolve to, a public address/);
    expect(log[2]!.error).not.toMatch(/127\.0\.0\.1|::1/);
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
