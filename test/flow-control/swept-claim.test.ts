/**
 * A flow-control slot and a swept claim (issue 36): a worker's claim is swept
 * while its attempt is still in flight, the message is claimed and admitted
 * again under a new claim, and then the first attempt's outcome is recorded
 * late. The late record must free only the slot it held: the new attempt
 * still counts against the key's parallelism. Driven step by step through
 * the engine's own functions on an API-only service (no worker of its own
 * races the test).
 */
import { describe, expect, it } from "vitest";
import { messageSettings } from "../../src/domain/publish/options";
import type { ClaimedMessage } from "../../src/db/queries/claim-messages";
import { claimMessages } from "../../src/db/queries/claim-messages";
import { releaseClaimedMessages } from "../../src/db/queries/sweep-claims";
import { circuitSettings } from "../../src/domain/destinations/circuit";
import { recordOutcomes } from "../../src/domain/delivery/outcome";
import { admitClaimed } from "../../src/domain/flow-control/admission";
import { isKeyed } from "../../src/domain/flow-control/keyed";
import { useDispatch } from "../support/service";

const dispatch = useDispatch({}, { role: "api" });
const ROOM = { limit: 10, share: 10, byDestination: {}, pass: 0 };

/** Claims what is due for `worker` and admits it; the one claimed message. */
async function claimAndAdmit(worker: string): Promise<ClaimedMessage> {
  const { sql } = dispatch.service;
  const { messages } = await sql.begin((tx) => claimMessages(tx, worker, ROOM));
  expect(messages).toHaveLength(1);
  expect(messages.every(isKeyed)).toBe(true);
  const { admitted } = await admitClaimed(sql, messages.filter(isKeyed));
  expect(admitted.map((message) => message.id)).toEqual([messages[0]!.id]);
  return messages[0]!;
}

const inFlight = async (key: string) =>
  Number((await dispatch.service.sql`select count(*) from dispatch.messages where flow_control_key = ${key} and flow_active`)[0]!.count);

describe("a late record of a swept claim's attempt", () => {
  it("frees only its own slot: the message re-admitted under a newer claim still counts in flight for its key", async () => {
    const published = await dispatch.api("/v2/publish/http://127.0.0.1:9/swept", {
      method: "POST",
      headers: { "Svc-Flow-Control-Key": "swept-key", "Svc-Flow-Control-Value": "parallelism=1" },
      body: "x",
    });
    expect(published.status).toBe(200);
    const first = await claimAndAdmit("worker-a");
    expect(await inFlight("swept-key")).toBe(1);

    // worker-a's claim is swept while its attempt is in flight: the message is due again, its slot free.
    await releaseClaimedMessages(dispatch.service.sql, [{ messageId: first.id, claimId: first.claimId }]);
    expect(await inFlight("swept-key")).toBe(0);
    const second = await claimAndAdmit("worker-b");
    expect(second.claimId).not.toBe(first.claimId);
    expect(await inFlight("swept-key")).toBe(1);

    // worker-a's attempt ends and is recorded late, under the claim that was swept.
    const settings = messageSettings(dispatch.config);
    const attempt = { kind: "response" as const, status: 200, headers: {}, body: Buffer.from("ok"), startedAt: new Date(), durationMs: 1 };
    await dispatch.service.sql.begin((tx) =>
      recordOutcomes(tx, [{ message: first, attempt, outcome: { kind: "delivered" } }], { ...settings, circuits: circuitSettings(dispatch.config, settings) }),
    );
    expect(await inFlight("swept-key")).toBe(1);
    const [row] = await dispatch.service.sql`select state, claim_id as "claimId" from dispatch.messages where id = ${first.id}`;
    expect(row).toEqual({ state: "CREATED", claimId: second.claimId });

    // worker-b's own record frees the slot.
    await dispatch.service.sql.begin((tx) =>
      recordOutcomes(tx, [{ message: second, attempt, outcome: { kind: "delivered" } }], { ...settings, circuits: circuitSettings(dispatch.config, settings) }),
    );
    expect(await inFlight("swept-key")).toBe(0);
  });
});
