/**
 * A project's failed messages, DLQ entries and DLQ retries are its own: its
 * tokens (the read-only one too) list, read and retry them, the other
 * project's answer 404 or list nothing, and the dashboard's list of recent
 * retries and a message's links show a session its own project's only.
 */
import { beforeAll, expect, it } from "vitest";
import { tokenDigest } from "../../src/domain/access-tokens/access-tokens";
import { dashboardSession } from "../support/dashboard-session";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { request, TEST_TOKEN, useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const ACME_READONLY = "acme-readonly-0123456789abcdef";
/** Paths that answer 500 for now. */
const failing = new Set<string>();
const receiver = useReceiver((r) => (failing.has(r.path) ? { status: 500, body: "down" } : { status: 200, body: "ok" }));
type Api = typeof dispatch.api;

beforeAll(async () => {
  await dispatch.service.sql`
    insert into dispatch.access_tokens (name, project, digest, read_only) values ('acme-ro', 'acme', ${tokenDigest(ACME_READONLY)}, true)`;
});

const readOnly: Api = (path, init = {}) =>
  request(`${dispatch.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${ACME_READONLY}`, ...(init.headers as Record<string, string>) } });

/** Publishes to `path` with no retries and waits for it to fail: its message id and DLQ id. */
async function failed(api: Api, path: string): Promise<{ messageId: string; dlqId: string }> {
  failing.add(path);
  const response = await api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers: { "Svc-Retries": "0" }, body: path });
  const { messageId } = await response.json();
  await poll(async () => (await (await api(`/v2/messages/${messageId}`)).json()).state === "FAILED", `${path} to fail`);
  const { messages } = await (await api(`/v2/dlq?url=${encodeURIComponent(`${receiver.url}${path}`)}`)).json();
  return { messageId, dlqId: messages[0].dlqId };
}

it("lets a project's tokens, the read-only one too, read its failed messages and DLQ entries, and no other project's", async () => {
  const ours = await failed(acme.api, "/acme-down");
  const theirs = await failed(dispatch.api, "/default-down");

  for (const api of [acme.api, readOnly]) {
    expect((await api(`/v2/messages/${ours.messageId}`)).status).toBe(200);
    expect((await api(`/v2/dlq/${ours.dlqId}`)).status).toBe(200);
    expect((await api(`/v2/messages/${theirs.messageId}`)).status).toBe(404);
    expect((await api(`/v2/dlq/${theirs.dlqId}`)).status).toBe(404);
    const listed = (await (await api("/v2/dlq")).json()).messages.map((m: { dlqId: string }) => m.dlqId);
    expect(listed).toEqual([ours.dlqId]);
  }
  expect((await readOnly(`/v2/dlq/retry/${ours.dlqId}`, { method: "POST" })).status).toBe(403);
  expect((await acme.api(`/v2/dlq/retry/${theirs.dlqId}`, { method: "POST" })).status).toBe(404);
  expect((await acme.api(`/v2/dlq/${theirs.dlqId}`, { method: "DELETE" })).status).toBe(404);
  expect((await dispatch.api(`/v2/dlq/${theirs.dlqId}`)).status).toBe(200);
});

it("shows a project's dashboard its own DLQ retries and the links of its own messages only", async () => {
  const ours = await failed(acme.api, "/acme-retried");
  const theirs = await failed(dispatch.api, "/default-retried");
  failing.clear();
  const retry = async (api: Api, dlqId: string) => (await (await api(`/v2/dlq/retry/${dlqId}`, { method: "POST" })).json()).messageId;
  const [ourRetry, theirRetry] = [await retry(acme.api, ours.dlqId), await retry(dispatch.api, theirs.dlqId)];

  const page = async (token: string, path: string) => {
    const { cookie } = await dashboardSession(dispatch.baseUrl, token);
    return (await fetch(`${dispatch.baseUrl}${path}`, { headers: { cookie } })).text();
  };
  const acmeDlq = await page(acme.token, "/dashboard/dlq");
  expect(acmeDlq).toContain(`data-retried="${ours.messageId}"`);
  expect(acmeDlq).not.toContain(theirs.messageId);
  const defaultDlq = await page(TEST_TOKEN, "/dashboard/dlq");
  expect(defaultDlq).toContain(`data-retried="${theirs.messageId}"`);
  expect(defaultDlq).not.toContain(ours.messageId);

  // The failed message's page links to its retry, the retry's to the original; neither page opens for the other project.
  expect(await page(acme.token, `/dashboard/messages/${ours.messageId}`)).toContain(ourRetry);
  expect(await page(acme.token, `/dashboard/messages/${ourRetry}`)).toContain(ours.messageId);
  const foreign = await fetch(`${dispatch.baseUrl}/dashboard/messages/${theirRetry}`, {
    headers: { cookie: (await dashboardSession(dispatch.baseUrl, acme.token)).cookie },
  });
  expect(foreign.status).toBe(404);
});
