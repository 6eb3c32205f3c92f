/**
 * The projects' administration over HTTP (`/admin/projects`, a Dispatch
 * extension): DISPATCH_ADMIN_TOKEN creates, lists, limits and deletes
 * projects as `dispatch project` does, and no other token may.
 */
import { Client } from "@upstash/qstash";
import { expect, it } from "vitest";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { request, useDispatch } from "../support/service";

const ADMIN = "admin-token-0123456789abcdef";
const dispatch = useDispatch({ adminToken: ADMIN });
const receiver = useReceiver();
const admin = (path: string, init: RequestInit = {}, token = ADMIN) =>
  request(`${dispatch.baseUrl}/admin/projects${path}`, { ...init, headers: { Authorization: `Bearer ${token}` } });

it("creates a project whose answered variables work with the official client, lists, limits and deletes it", async () => {
  const created = await admin("/ops", { method: "POST" });
  expect(created.status).toBe(200);
  const env = await created.json();
  expect(Object.keys(env)).toEqual(["QSTASH_URL", "QSTASH_TOKEN", "QSTASH_CURRENT_SIGNING_KEY", "QSTASH_NEXT_SIGNING_KEY"]);
  expect(env.QSTASH_URL).toBe(dispatch.baseUrl);
  expect(await (await admin("/ops/env")).json()).toEqual(env);
  const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN, retry: false });
  await poll(() => client.publish({ url: `${receiver.url}/ops`, body: "hi" }).catch(() => undefined), "the new token to be accepted");

  const limited = await admin("/ops/limit?messagesPerDay=1000&publishesPerSecond=0", { method: "POST" });
  expect(await limited.json()).toMatchObject({ name: "ops", messagesPerDay: 1000, publishesPerSecond: null, tokens: 1 });
  expect((await (await admin("")).json()).map((p: { name: string }) => p.name)).toEqual(["default", "ops"]);
  expect((await admin("/ops", { method: "POST" })).status).toBe(409);
  const bad = await admin("/ops/limit?messagesPerDay=lots", { method: "POST" });
  expect([bad.status, (await bad.json()).error]).toEqual([400, expect.stringContaining("messagesPerDay")]);

  // Deleted once its message was delivered: a project holding a pending one is refused without force.
  const pending = async () => (await (await admin("")).json()).find((p: { name: string }) => p.name === "ops").pendingMessages;
  await poll(async () => (await pending()) === 0, "the message delivered");
  const deleted = await admin("/ops", { method: "DELETE" });
  expect(await deleted.json()).toEqual({ deletedMessages: 1 });
  expect((await admin("/ops/env")).status).toBe(404);
  const refused = await admin("/default", { method: "DELETE" });
  expect([refused.status, (await refused.json()).error]).toEqual([409, expect.stringContaining("cannot be deleted")]);
});

it("answers no token but DISPATCH_ADMIN_TOKEN", async () => {
  for (const token of [dispatch.config.tokens[0]!, "not-the-admin-token-0000"]) {
    const response = await admin("", {}, token);
    expect([response.status, (await response.json()).error]).toEqual([401, "invalid token"]);
  }
});
