/**
 * A rate-limited delivery that cannot start within its admission's deadline
 * is not sent: the attempt reports it late, and the worker withdraws the
 * admission (the message is due again, the start its window counted is
 * forgotten), so a busy worker can neither push a start past the margin the
 * rate window allows for nor waste the key's rate.
 */
import { NO_TRACING } from "../../src/observability/tracing";
import { afterAll, expect, it } from "vitest";
import type { ClaimedMessage } from "../../src/db/queries/claim-messages";
import { withdrawAdmission } from "../../src/domain/flow-control/admission";
import { findMessage } from "../../src/domain/messages/message";
import { DestinationGuard } from "../../src/outbound/destination-guard";
import { HttpClient } from "../../src/outbound/http-client";
import { deliverClaimed } from "../../src/worker/deliver";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch({}, { role: "api" });
const receiver = useReceiver();
const http = new HttpClient({ guard: new DestinationGuard(true), maxResponseBytes: 1024 });

afterAll(async () => {
  await http.close();
});

it("sends within the deadline, and not at all past it", async () => {
  const response = await dispatch.api(`/v2/publish/${receiver.url}/late`, {
    method: "POST",
    headers: { "Svc-Flow-Control-Key": "late-key", "Svc-Flow-Control-Value": "rate=1" },
  });
  const message = (await findMessage(dispatch.service.sql, (await response.json()).messageId))!;
  // Attempted by hand (the service runs no worker), as if under a claim.
  const claimed: ClaimedMessage = { ...message, claimId: 1 };
  const deps = {
    sql: dispatch.service.sql,
    http,
    signingKeys: async () => dispatch.service.signingKeys,
    retrying: <T>(operation: () => Promise<T>) => operation(),
    defaultTimeoutMs: 5000,
    retryDelayScale: 1,
    llmApiKey: null,
    shutdown: new AbortController().signal,
    unreachable: async () => null,
    tracing: NO_TRACING,
  };
  expect(await deliverClaimed(deps, claimed, { startBy: Date.now() - 1 })).toEqual({ kind: "late" });
  expect(receiver.requests).toHaveLength(0);
  const delivery = await deliverClaimed(deps, claimed, { startBy: Date.now() + 60_000 });
  expect(delivery.kind === "attempted" && delivery.record.outcome.kind).toBe("delivered");
  expect(receiver.requests).toHaveLength(1);
});

it("withdrawing an admission forgets one start at its time and puts the message back on the work list", async () => {
  const response = await dispatch.api(`/v2/publish/${receiver.url}/withdrawn`, {
    method: "POST",
    headers: { "Svc-Flow-Control-Key": "withdrawn-key", "Svc-Flow-Control-Value": "rate=5" },
  });
  const { messageId } = await response.json();
  const sql = dispatch.service.sql;
  const [t1, t2] = [new Date(Date.now() - 200), new Date(Date.now() - 100)];
  await sql`update dispatch.flow_control_keys set starts = ${[t1, t1, t2].map((t) => t.toISOString())}::timestamptz[]
    where key = 'withdrawn-key'`;
  await sql`update dispatch.messages set due_at = null, claim_id = 42, flow_active = true where id = ${messageId}`;
  const message = (await findMessage(sql, messageId))!;
  await withdrawAdmission(sql, { ...message, claimId: 42, flowControlKey: "withdrawn-key" }, t1);
  const [key] = await sql<{ starts: Date[] }[]>`select starts from dispatch.flow_control_keys where key = 'withdrawn-key'`;
  expect(key!.starts.map((t) => new Date(t).getTime())).toEqual([t1.getTime(), t2.getTime()]);
  const [row] = await sql`select due_at, flow_active from dispatch.messages where id = ${messageId}`;
  expect(row!.due_at).not.toBeNull();
  expect(row!.flow_active).toBe(false);
});
