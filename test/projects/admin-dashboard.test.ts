/**
 * DISPATCH_ADMIN_TOKEN signs in to the dashboard as an admin: it chooses a
 * project and sees that project's pages (its overview, messages, queues) as
 * the project's own token would; the default project until it chooses, and
 * again once the project it chose is deleted. A project's token cannot
 * choose.
 */
import { expect, it } from "vitest";
import { dashboardSession } from "../support/dashboard-session";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { request, useDispatch } from "../support/service";

const ADMIN = "admin-token-0123456789abcdef";
const dispatch = useDispatch({ adminToken: ADMIN });
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

const page = async (cookie: string, path: string) => (await fetch(`${dispatch.baseUrl}${path}`, { headers: { cookie } })).text();
const choose = (session: { cookie: string; csrf: string }, project: string) =>
  fetch(`${dispatch.baseUrl}/dashboard/project`, {
    method: "POST",
    headers: { cookie: session.cookie, origin: dispatch.baseUrl, "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ _csrf: session.csrf, project }),
    redirect: "manual",
  });

it("lets an admin session choose a project and see its overview, messages and queues, and only its", async () => {
  await acme.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "acme-orders", parallelism: 1 }) });
  await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "default-orders", parallelism: 1 }) });
  const ours = (await (await acme.api(`/v2/publish/${receiver.url}/acme`, { method: "POST", body: "a" })).json()).messageId;
  const theirs = (await (await dispatch.api(`/v2/publish/${receiver.url}/default`, { method: "POST", body: "d" })).json()).messageId;

  const admin = await dashboardSession(dispatch.baseUrl, ADMIN);
  const overview = await page(admin.cookie, "/dashboard");
  expect(overview).toContain('<option value="acme">acme</option>');
  expect(overview).toContain('<option value="default" selected="">default</option>');
  expect(await page(admin.cookie, "/dashboard/queues")).toContain("default-orders");
  expect(await page(admin.cookie, "/dashboard/messages")).toContain(theirs);

  const chosen = await choose(admin, "acme");
  expect([chosen.status, chosen.headers.get("location")]).toEqual([303, "/dashboard"]);
  expect(await page(admin.cookie, "/dashboard")).toContain('<option value="acme" selected="">acme</option>');
  const queues = await page(admin.cookie, "/dashboard/queues");
  expect(queues).toContain("acme-orders");
  expect(queues).not.toContain("default-orders");
  const messages = await page(admin.cookie, "/dashboard/messages");
  expect(messages).toContain(ours);
  expect(messages).not.toContain(theirs);
  expect((await fetch(`${dispatch.baseUrl}/dashboard/messages/${theirs}`, { headers: { cookie: admin.cookie } })).status).toBe(404);
  // What every project shares stays in view: the admin is the operator of them all.
  expect((await fetch(`${dispatch.baseUrl}/dashboard/destinations`, { headers: { cookie: admin.cookie } })).status).toBe(200);

  expect((await choose(admin, "nope")).status).toBe(404);
  expect(await page(admin.cookie, "/dashboard/queues")).toContain("acme-orders");
});

it("refuses a project's token the choice, and its pages stay its own", async () => {
  const session = await dashboardSession(dispatch.baseUrl, acme.token);
  expect(await page(session.cookie, "/dashboard")).not.toContain('name="project"');
  expect((await choose(session, "default")).status).toBe(403);
  expect(await page(session.cookie, "/dashboard")).toContain('data-project="acme"');
});

it("shows the default project again once the project an admin session chose is deleted", async () => {
  const admin = await dashboardSession(dispatch.baseUrl, ADMIN);
  await request(`${dispatch.baseUrl}/admin/projects/gone`, { method: "POST", headers: { Authorization: `Bearer ${ADMIN}` } });
  expect((await choose(admin, "gone")).status).toBe(303);
  expect(await page(admin.cookie, "/dashboard")).toContain('<option value="gone" selected="">gone</option>');
  const deleted = await request(`${dispatch.baseUrl}/admin/projects/gone`, { method: "DELETE", headers: { Authorization: `Bearer ${ADMIN}` } });
  expect(deleted.status).toBe(200);
  const overview = await page(admin.cookie, "/dashboard");
  expect(overview).toContain('<option value="default" selected="">default</option>');
  expect(overview).not.toContain('value="gone"');
});
