/**
 * Queues are each project's: two projects may have a queue of one name, and
 * a token sees, changes and publishes into its own project's only.
 */
import { expect, it } from "vitest";
import { dashboardSession } from "../support/dashboard-session";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

const upsert = (api: typeof dispatch.api, parallelism: number) =>
  api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "orders", parallelism }) });

it("keeps two projects' queues of one name apart", async () => {
  expect((await upsert(dispatch.api, 1)).status).toBe(200);
  expect((await upsert(acme.api, 3)).status).toBe(200);
  const mine = async (api: typeof dispatch.api) => (await (await api("/v2/queues")).json()).map((q: { name: string; parallelism: number }) => [q.name, q.parallelism]);
  expect(await mine(dispatch.api)).toEqual([["orders", 1]]);
  expect(await mine(acme.api)).toEqual([["orders", 3]]);

  // Pausing acme's leaves the default project's running: its message is delivered, acme's waits.
  expect((await acme.api("/v2/queues/orders/pause", { method: "POST" })).status).toBe(200);
  expect((await (await dispatch.api("/v2/queues/orders")).json()).paused).toBe(false);
  const publish = (api: typeof dispatch.api, path: string) =>
    api(`/v2/enqueue/orders/${receiver.url}/${path}`, { method: "POST", body: path });
  expect((await publish(acme.api, "acme")).status).toBe(200);
  expect((await publish(dispatch.api, "default")).status).toBe(200);
  await receiver.waitFor(1);
  const lag = async (api: typeof dispatch.api) => (await (await api("/v2/queues/orders")).json()).lag;
  await poll(async () => (await lag(dispatch.api)) === 0, "the default project's message to be recorded delivered");
  expect(await lag(acme.api)).toBe(1);
  expect(receiver.requests.map((request) => request.path)).toEqual(["/default"]);

  // Resuming acme's starts its message; deleting it leaves the default project's queue.
  expect((await acme.api("/v2/queues/orders/resume", { method: "POST" })).status).toBe(200);
  await poll(() => receiver.requests.length === 2, "acme's queued message");
  expect((await acme.api("/v2/queues/orders", { method: "DELETE" })).status).toBe(200);
  expect((await acme.api("/v2/queues/orders")).status).toBe(404);
  expect((await dispatch.api("/v2/queues/orders")).status).toBe(200);
});

it("answers 404 for another project's queue, and changes nothing of it", async () => {
  await upsert(dispatch.api, 2);
  expect((await acme.api("/v2/queues/orders/pause", { method: "POST" })).status).toBe(404);
  expect((await dispatch.api("/v2/queues/orders")).status).toBe(200);
  expect((await (await dispatch.api("/v2/queues/orders")).json()).paused).toBe(false);
});

it("shows a project's dashboard session its own queues, and pauses its own", async () => {
  await upsert(acme.api, 7);
  await upsert(dispatch.api, 2);
  const { cookie, csrf } = await dashboardSession(dispatch.baseUrl, acme.token);
  const page = await (await fetch(`${dispatch.baseUrl}/dashboard/queues`, { headers: { cookie } })).text();
  expect(page).toContain("<td>7</td>");
  expect(page).not.toContain("<td>2</td>");
  const paused = await fetch(`${dispatch.baseUrl}/dashboard/queues/orders/pause`, {
    method: "POST",
    headers: { cookie, origin: dispatch.baseUrl, "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ _csrf: csrf }),
    redirect: "manual",
  });
  expect(paused.status).toBe(303);
  expect((await (await acme.api("/v2/queues/orders")).json()).paused).toBe(true);
  expect((await (await dispatch.api("/v2/queues/orders")).json()).paused).toBe(false);
});
