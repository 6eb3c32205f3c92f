/**
 * The dashboard's overview counts the viewer's project only: messages by
 * state, the last hour's activity, and the totals (queues, DLQ, ...).
 */
import { expect, it } from "vitest";
import { countByState } from "../../src/domain/overview/state-counts";
import { lastHour } from "../../src/domain/overview/activity";
import { readTotals } from "../../src/domain/overview/totals";
import { dashboardSession } from "../support/dashboard-session";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

it("counts each project's messages, activity and totals apart", async () => {
  for (const path of ["a1", "a2", "a3"]) expect((await acme.api(`/v2/publish/${receiver.url}/${path}`, { method: "POST", body: path })).status).toBe(200);
  expect((await dispatch.api(`/v2/publish/${receiver.url}/d1`, { method: "POST", body: "d1" })).status).toBe(200);
  await acme.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "only-acme", parallelism: 1 }) });
  await poll(async () => (await countByState(dispatch.service.sql, "messages", "acme")).counts.DELIVERED === 3, "acme's three deliveries recorded");
  await poll(async () => (await countByState(dispatch.service.sql, "messages", "default")).counts.DELIVERED === 1, "the default project's delivery recorded");

  const sql = dispatch.service.sql;
  expect((await countByState(sql, "messages", "acme")).counts).toEqual({ DELIVERED: 3 });
  expect((await countByState(sql, "messages", "default")).counts).toEqual({ DELIVERED: 1 });
  const delivered = async (project: string) => (await lastHour(sql, project)).minutes.reduce((n, minute) => n + minute.delivered, 0);
  expect([await delivered("acme"), await delivered("default")]).toEqual([3, 1]);
  expect((await lastHour(sql, "acme")).created).toEqual({ DELIVERED: 3 });
  expect([(await readTotals(sql, "acme")).queues, (await readTotals(sql, "default")).queues]).toEqual([1, 0]);

  // An acme session's overview page renders from acme's figures.
  const { cookie } = await dashboardSession(dispatch.baseUrl, acme.token);
  const page = await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie } });
  expect(page.status).toBe(200);
});
