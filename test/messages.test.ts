/** Reading and cancelling a message; the event log of its life. */
import { describe, expect, it } from "vitest";
import { engineCycle, expectUntouched } from "./support/engine";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { eventStates } from "./support/rows";
import { request, TEST_TOKEN, useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver();

const states = (messageId: string) => eventStates(dispatch, messageId);

describe("messages", () => {
  it("shows a pending message with its configuration", async () => {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/later`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Svc-Delay": "1h", "Svc-Forward-X-A": "1", "Svc-Retries": "4" },
      body: '{"a":1}',
    });
    const { messageId } = await response.json();
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message).toMatchObject({
      messageId,
      url: `${receiver.url}/later`,
      state: "CREATED",
      method: "POST",
      header: { "Content-Type": ["application/json"], "X-A": ["1"] },
      body: '{"a":1}',
      maxRetries: 4,
    });
    expect(message.notBefore - message.createdAt).toBeGreaterThanOrEqual(3_599_000);
  });

  it("answers 404 with an error for an unknown message", async () => {
    const response = await dispatch.api("/v2/messages/msg_unknown");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "message msg_unknown not found" });
  });

  it("cancel prevents delivery and is logged", async () => {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/cancelled`, {
      method: "POST",
      headers: { "Svc-Delay": "1s" },
    });
    const { messageId } = await response.json();
    const cancel = await dispatch.api(`/v2/messages/${messageId}`, { method: "DELETE" });
    expect(await cancel.json()).toEqual({ cancelled: 1 });
    // A marker due after it has been delivered: the cancelled message came due and was not.
    await engineCycle(dispatch, "1s");
    expect(receiver.requests.filter((r) => r.path === "/cancelled")).toHaveLength(0);
    await expectUntouched(dispatch, [messageId]);
    expect(await states(messageId)).toEqual(["CREATED", "CANCEL_REQUESTED", "CANCELED"]);
    const again = await dispatch.api(`/v2/messages/${messageId}`, { method: "DELETE" });
    expect(await again.json()).toEqual({ cancelled: 0 });
  });

  it("logs CREATED, ACTIVE and DELIVERED for a delivered message", async () => {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/now`, { method: "POST", body: "x" });
    const { messageId } = await response.json();
    await receiver.waitFor(1);
    const log = await poll(async () => {
      const found = await states(messageId);
      return found.at(-1) === "DELIVERED" && found;
    }, "the DELIVERED event");
    expect(log).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
  });
});

describe("authentication", () => {
  it("rejects /v2 requests without a valid token with 401 and a JSON error", async () => {
    const missing = await request(`${dispatch.baseUrl}/v2/messages/x`);
    expect(missing.status).toBe(401);
    expect((await missing.json()).error).toMatch(/Authorization/);
    const wrong = await request(`${dispatch.baseUrl}/v2/messages/x`, { headers: { Authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: "invalid token" });
  });

  it("accepts the token as the qstash_token query parameter", async () => {
    const response = await fetch(`${dispatch.baseUrl}/v2/messages/msg_x?qstash_token=${encodeURIComponent(TEST_TOKEN)}`);
    expect(response.status).toBe(404);
  });

  it("answers unknown routes with a JSON 404", async () => {
    const response = await dispatch.api("/v2/nothing-here");
    expect(response.status).toBe(404);
    expect((await response.json()).error).toMatch(/no route/);
  });
});
