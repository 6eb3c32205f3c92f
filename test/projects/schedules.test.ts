/**
 * Schedules are each project's: two projects may have a schedule of one id,
 * a token sees and changes its own project's only, and a tick publishes in
 * its schedule's project (to that project's URL group). The schedules fire by
 * a clock the test moves on, so a minute's tick takes no real minute.
 */
import { expect, it } from "vitest";
import { TestClock } from "../support/clock";
import { dashboardSession } from "../support/dashboard-session";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const clock = new TestClock();
const dispatch = useDispatch({}, { now: clock.now });
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

type Api = typeof dispatch.api;
interface ScheduleJson {
  scheduleId: string;
  destination: string;
  isPaused: boolean;
  nextScheduleTime: number;
  lastScheduleTime?: number;
  lastScheduleStates?: Record<string, string>;
}

async function create(api: Api, id: string, destination: string): Promise<void> {
  const response = await api(`/v2/schedules/${destination}`, { method: "POST", headers: { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": id } });
  expect(response.status, await response.text()).toBe(200);
}
const schedule = async (api: Api, id: string) => (await (await api(`/v2/schedules/${id}`)).json()) as ScheduleJson;
const listed = async (api: Api) =>
  ((await (await api("/v2/schedules")).json()) as ScheduleJson[]).map((s) => [s.scheduleId, s.destination]);
const addEndpoint = (api: Api, path: string) =>
  api("/v2/topics/team/endpoints", { method: "POST", body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/${path}` }] }) });

it("keeps two projects' schedules of one id apart, and fires each tick in its schedule's project", async () => {
  expect((await addEndpoint(dispatch.api, "default-team")).status).toBe(200);
  expect((await addEndpoint(acme.api, "acme-team")).status).toBe(200);
  await create(dispatch.api, "nightly", `${receiver.url}/default`);
  await create(acme.api, "nightly", "team");
  expect(await listed(dispatch.api)).toEqual([["nightly", `${receiver.url}/default`]]);
  expect(await listed(acme.api)).toEqual([["nightly", "team"]]);

  const ticks = [(await schedule(dispatch.api, "nightly")).nextScheduleTime, (await schedule(acme.api, "nightly")).nextScheduleTime];
  await clock.moveTo(dispatch, Math.max(...ticks) + 5);
  const fired = async (api: Api, tick: number | undefined) => (await schedule(api, "nightly")).lastScheduleTime === tick;
  await poll(async () => (await fired(dispatch.api, ticks[0])) && (await fired(acme.api, ticks[1])), "both projects' nightly to fire");

  // acme's tick fans out to acme's group team, the default project's to its URL: each message in its schedule's project.
  const made = await dispatch.service.sql<{ id: string; project: string; url: string }[]>`
    select id, project, url from dispatch.messages where schedule_id = 'nightly' order by project`;
  expect(made.map((m) => [m.project, m.url])).toEqual([
    ["acme", `${receiver.url}/acme-team`],
    ["default", `${receiver.url}/default`],
  ]);
  const lastMade = async (api: Api) => Object.keys((await schedule(api, "nightly")).lastScheduleStates ?? {});
  expect(await lastMade(acme.api)).toEqual([made[0]?.id]);
  expect(await lastMade(dispatch.api)).toEqual([made[1]?.id]);
  await poll(() => receiver.requests.length === 2, "both ticks' deliveries");
  expect(receiver.requests.map((r) => r.path).sort()).toEqual(["/acme-team", "/default"]);
});

it("answers 404 for another project's schedule, and changes nothing of it", async () => {
  await create(acme.api, "acme-only", `${receiver.url}/acme-only`);
  expect((await dispatch.api("/v2/schedules/acme-only")).status).toBe(404);
  expect((await dispatch.api("/v2/schedules/acme-only/pause", { method: "PATCH" })).status).toBe(404);
  expect((await dispatch.api("/v2/schedules/acme-only/resume", { method: "POST" })).status).toBe(404);
  // A delete answers 200 for an id the project has no schedule of (docs/hosted-api.md §16 #24), and deletes nothing.
  expect((await dispatch.api("/v2/schedules/acme-only", { method: "DELETE" })).status).toBe(200);
  expect(await schedule(acme.api, "acme-only")).toMatchObject({ scheduleId: "acme-only", isPaused: false });

  // Of one id, pausing or deleting one project's schedule leaves the other's.
  await create(dispatch.api, "shared", `${receiver.url}/default-shared`);
  await create(acme.api, "shared", `${receiver.url}/acme-shared`);
  expect((await acme.api("/v2/schedules/shared/pause", { method: "PATCH" })).status).toBe(200);
  expect((await schedule(dispatch.api, "shared")).isPaused).toBe(false);
  expect((await dispatch.api("/v2/schedules/shared", { method: "DELETE" })).status).toBe(200);
  expect((await dispatch.api("/v2/schedules/shared")).status).toBe(404);
  expect(await schedule(acme.api, "shared")).toMatchObject({ destination: `${receiver.url}/acme-shared`, isPaused: true });
});

it("shows a project's dashboard session its own schedules, and pauses its own", async () => {
  await create(dispatch.api, "dash", `${receiver.url}/default-dash`);
  await create(acme.api, "dash", `${receiver.url}/acme-dash`);
  await create(dispatch.api, "default-only", `${receiver.url}/default-only`);
  const { cookie, csrf } = await dashboardSession(dispatch.baseUrl, acme.token);
  const page = await (await fetch(`${dispatch.baseUrl}/dashboard/schedules`, { headers: { cookie } })).text();
  expect(page).toContain(`${receiver.url}/acme-dash`);
  expect(page).not.toContain(`${receiver.url}/default-dash`);
  expect(page).not.toContain("default-only");
  expect((await fetch(`${dispatch.baseUrl}/dashboard/schedules/default-only`, { headers: { cookie } })).status).toBe(404);
  expect((await (await fetch(`${dispatch.baseUrl}/dashboard/schedules/dash`, { headers: { cookie } })).text())).toContain(`${receiver.url}/acme-dash`);

  const paused = await fetch(`${dispatch.baseUrl}/dashboard/schedules/dash/pause`, {
    method: "POST",
    headers: { cookie, origin: dispatch.baseUrl, "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ _csrf: csrf }),
    redirect: "manual",
  });
  expect(paused.status).toBe(303);
  expect((await schedule(acme.api, "dash")).isPaused).toBe(true);
  expect((await schedule(dispatch.api, "dash")).isPaused).toBe(false);
});
