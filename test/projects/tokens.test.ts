/**
 * A token belongs to a project: what it publishes is stored in that project,
 * whether the token was read at start or created while the service runs.
 * (Projects are made by SQL here: the commands that make them come with the
 * isolation of every resource.)
 */
import { beforeAll, expect, it } from "vitest";
import { tokenDigest } from "../../src/domain/access-tokens/access-tokens";
import { useReceiver } from "../support/receiver";
import { request, useDispatch } from "../support/service";

const dispatch = useDispatch();
const receiver = useReceiver();
const ACME_TOKEN = "acme-token-0123456789abcdef";
const ACME_READONLY = "acme-readonly-0123456789abcdef";

const asAcme = (path: string, init: RequestInit = {}, token = ACME_TOKEN) =>
  request(`${dispatch.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });

beforeAll(async () => {
  const sql = dispatch.service.sql;
  await sql`insert into dispatch.projects (name) values ('acme')`;
  await sql`
    insert into dispatch.access_tokens (name, project, digest, read_only)
    values ('acme-ci', 'acme', ${tokenDigest(ACME_TOKEN)}, false), ('acme-ro', 'acme', ${tokenDigest(ACME_READONLY)}, true)`;
});

it("stores what a project's token publishes, and the messages it makes, in its project", async () => {
  const published = await asAcme(`/v2/publish/${receiver.url}/acme`, { method: "POST", body: "from acme" });
  expect(published.status).toBe(200);
  const { messageId } = await published.json();
  const fromDefault = await dispatch.api(`/v2/publish/${receiver.url}/default`, { method: "POST", body: "from default" });
  const defaultId = (await fromDefault.json()).messageId;
  await receiver.waitFor(2);
  const sql = dispatch.service.sql;
  const stored = await sql`select id, project from dispatch.messages order by seq`;
  expect(stored).toEqual([
    { id: messageId, project: "acme" },
    { id: defaultId, project: "default" },
  ]);
  const scheduled = await asAcme(`/v2/schedules/${receiver.url}/tick`, { method: "POST", headers: { "Svc-Cron": "0 0 1 1 *" }, body: "x" });
  expect(scheduled.status).toBe(200);
  const { scheduleId } = await scheduled.json();
  expect(await sql`select project from dispatch.schedules where id = ${scheduleId}`).toEqual([{ project: "acme" }]);
});

it("keeps a project's read-only token to reading", async () => {
  expect((await asAcme("/v2/schedules", {}, ACME_READONLY)).status).toBe(200);
  const refused = await asAcme(`/v2/publish/${receiver.url}/x`, { method: "POST", body: "no" }, ACME_READONLY);
  expect(refused.status).toBe(403);
});

it("accepts a token stored while the service runs (no notification read yet), in its project", async () => {
  const LATE = "acme-late-0123456789abcdef";
  await dispatch.service.sql`
    insert into dispatch.access_tokens (name, project, digest, read_only) values ('acme-late', 'acme', ${tokenDigest(LATE)}, false)`;
  const published = await asAcme(`/v2/publish/${receiver.url}/late`, { method: "POST", body: "late" }, LATE);
  expect(published.status).toBe(200);
  const { messageId } = await published.json();
  expect(await dispatch.service.sql`select project from dispatch.messages where id = ${messageId}`).toEqual([{ project: "acme" }]);
});
