/** Deduplication by id and by content, including concurrent publishes. */
import { describe, expect, it } from "vitest";
import { engineCycle } from "./support/engine";
import { useReceiver } from "./support/receiver";
import { countMessages } from "./support/rows";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver();

const publish = (path: string, headers: Record<string, string>, body = "same body") =>
  dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body });

const countFor = (path: string) => countMessages(dispatch, { url: receiver.url + path });

describe("deduplication", () => {
  it("returns the first message's id for a repeated Deduplication-Id and delivers once", async () => {
    const first = await publish("/by-id", { "Svc-Deduplication-Id": "order-1" });
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    const second = await publish("/by-id", { "Svc-Deduplication-Id": "order-1" }, "another body");
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ messageId: firstBody.messageId, url: `${receiver.url}/by-id`, deduplicated: true });
    await receiver.waitFor(1);
    await engineCycle(dispatch);
    expect(receiver.requests.filter((r) => r.path === "/by-id")).toHaveLength(1);
    expect(await countFor("/by-id")).toBe(1);
  });

  it("deduplicates identical content with Content-Based-Deduplication, not different content", async () => {
    const headers = { "Svc-Content-Based-Deduplication": "true", "Content-Type": "text/plain" };
    const a = await (await publish("/content", headers)).json();
    const b = await (await publish("/content", headers)).json();
    const c = await (await publish("/content", headers, "different body")).json();
    expect(b).toMatchObject({ messageId: a.messageId, deduplicated: true });
    expect(c.messageId).not.toBe(a.messageId);
    expect(c.deduplicated).toBe(false);
    expect(await countFor("/content")).toBe(2);
  });

  it("scopes a Deduplication-Id to its destination", async () => {
    const a = await (await publish("/scope-a", { "Upstash-Deduplication-Id": "shared" })).json();
    const b = await (await publish("/scope-b", { "Upstash-Deduplication-Id": "shared" })).json();
    expect(b.messageId).not.toBe(a.messageId);
  });

  it("creates exactly one message from 30 concurrent identical publishes", async () => {
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => publish("/race", { "Svc-Deduplication-Id": "race-1" })),
    );
    const bodies = await Promise.all(responses.map((r) => r.json()));
    const ids = new Set(bodies.map((b) => b.messageId));
    expect(ids.size).toBe(1);
    expect(bodies.filter((b) => !b.deduplicated)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await countFor("/race")).toBe(1);
  });

  it("accepts the id again once the window has passed", async () => {
    const first = await (await publish("/window", { "Svc-Deduplication-Id": "w" })).json();
    await dispatch.service.sql`update dispatch.deduplication_keys set expires_at = now() - interval '1 second'`;
    const second = await (await publish("/window", { "Svc-Deduplication-Id": "w" })).json();
    expect(second.deduplicated).toBe(false);
    expect(second.messageId).not.toBe(first.messageId);
  });
});
