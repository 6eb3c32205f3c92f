/**
 * A rate-limited delivery that cannot start within its admission's deadline
 * is not sent: the attempt reports nothing (the worker hands the message back
 * for a new admission), so a busy worker cannot push a start past the margin
 * the rate window allows for.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { findMessage } from "../../src/domain/messages/store";
import { HttpClient } from "../../src/outbound/http-client";
import { deliverClaimed } from "../../src/worker/deliver";
import { type Receiver, startReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch({}, { role: "api" });
let receiver: Receiver;
const http = new HttpClient({ allowPrivateNetworks: true, maxResponseBytes: 1024 });

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await http.close();
});

it("sends within the deadline, and not at all past it", async () => {
  const response = await dispatch.api(`/v2/publish/${receiver.url}/late`, {
    method: "POST",
    headers: { "Svc-Flow-Control-Key": "late-key", "Svc-Flow-Control-Value": "rate=1" },
  });
  const message = (await findMessage(dispatch.service.sql, (await response.json()).messageId))!;
  const deps = {
    sql: dispatch.service.sql,
    http,
    signingKeys: async () => dispatch.service.signingKeys,
    retrying: <T>(operation: () => Promise<T>) => operation(),
    defaultTimeoutMs: 5000,
    retryDelayScale: 1,
    llmApiKey: null,
    shutdown: new AbortController().signal,
  };
  expect(await deliverClaimed(deps, message, Date.now() - 1)).toBeNull();
  expect(receiver.requests).toHaveLength(0);
  const record = await deliverClaimed(deps, message, Date.now() + 60_000);
  expect(record?.outcome.kind).toBe("delivered");
  expect(receiver.requests).toHaveLength(1);
});
