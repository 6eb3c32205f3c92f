/**
 * What every project shares, destinations' health and the metrics, is the operator's: the
 * default project's tokens see and change it; another project's get a 403,
 * through the API and the dashboard (whose navigation leaves it out).
 */
import { expect, it } from "vitest";
import { dashboardSession } from "../support/dashboard-session";
import { useProject } from "../support/projects";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");

it("answers destinations to the default project's tokens only", async () => {
  expect((await dispatch.api("/v2/destinations")).status).toBe(200);
  const refused = await acme.api("/v2/destinations");
  expect(refused.status).toBe(403);
  expect((await refused.json()).error).toContain("only the default project's tokens");
  expect((await acme.api("/v2/destinations/http%3A%2F%2F127.0.0.1%3A9/open", { method: "POST" })).status).toBe(403);
  expect((await acme.api("/v2/destinations/http%3A%2F%2F127.0.0.1%3A9")).status).toBe(403);
  expect(await dispatch.service.sql`select 1 from dispatch.destinations where destination = 'http://127.0.0.1:9'`).toEqual([]);
});

it("answers /metrics, which names every project's queues, to the default project's tokens only", async () => {
  expect((await dispatch.api("/metrics")).status).toBe(200);
  expect((await acme.api("/metrics")).status).toBe(403);
});

it("leaves destinations out of another project's dashboard", async () => {
  const theirs = await dashboardSession(dispatch.baseUrl, acme.token);
  const overview = await (await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie: theirs.cookie } })).text();
  expect(overview).not.toContain('href="/dashboard/destinations"');
  expect((await fetch(`${dispatch.baseUrl}/dashboard/destinations`, { headers: { cookie: theirs.cookie } })).status).toBe(403);
  const ours = await dashboardSession(dispatch.baseUrl, dispatch.config.tokens[0]!);
  expect(await (await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie: ours.cookie } })).text()).toContain('href="/dashboard/destinations"');
  expect((await fetch(`${dispatch.baseUrl}/dashboard/destinations`, { headers: { cookie: ours.cookie } })).status).toBe(200);
});
