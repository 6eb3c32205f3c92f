/**
 * Flow-control keys are each project's: two projects' messages with one key
 * name count against two keys, each with its own limits, pause and listing.
 */
import { expect, it } from "vitest";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

const publish = (api: typeof dispatch.api, path: string, value: string) =>
  api(`/v2/publish/${receiver.url}/${path}`, {
    method: "POST",
    headers: { "Svc-Flow-Control-Key": "tenant", "Svc-Flow-Control-Value": value },
    body: path,
  });
const keys = async (api: typeof dispatch.api) =>
  (await (await api("/v2/flowControl")).json()).map((k: { flowControlKey: string; parallelismMax: number }) => [k.flowControlKey, k.parallelismMax]);

it("keeps two projects' keys of one name apart: limits, pause and listing", async () => {
  expect((await publish(dispatch.api, "default-1", "parallelism=1")).status).toBe(200);
  expect((await publish(acme.api, "acme-1", "parallelism=4")).status).toBe(200);
  expect(await keys(dispatch.api)).toEqual([["tenant", 1]]);
  expect(await keys(acme.api)).toEqual([["tenant", 4]]);
  await poll(() => receiver.requests.length === 2, "both first messages");

  // acme pauses its key: its next message waits, the default project's key of the same name goes on.
  expect((await acme.api("/v2/flowControl/tenant/pause", { method: "POST" })).status).toBe(200);
  expect((await (await dispatch.api("/v2/flowControl/tenant")).json()).isPaused).toBe(false);
  expect((await publish(acme.api, "acme-2", "parallelism=4")).status).toBe(200);
  expect((await publish(dispatch.api, "default-2", "parallelism=1")).status).toBe(200);
  await poll(() => receiver.requests.some((r) => r.path === "/default-2"), "the default project's second message");
  expect((await (await acme.api("/v2/flowControl/tenant")).json()).waitListSize).toBe(1);
  expect(receiver.requests.some((r) => r.path === "/acme-2")).toBe(false);

  expect((await acme.api("/v2/flowControl/tenant/resume", { method: "POST" })).status).toBe(200);
  await poll(() => receiver.requests.some((r) => r.path === "/acme-2"), "acme's held message after its resume");
});

it("answers 404 for a key only another project has, and changes nothing of it", async () => {
  const own = await acme.api(`/v2/publish/${receiver.url}/acme-only`, {
    method: "POST",
    headers: { "Svc-Flow-Control-Key": "acme-key", "Svc-Flow-Control-Value": "rate=5" },
  });
  expect(own.status).toBe(200);
  expect((await dispatch.api("/v2/flowControl/acme-key")).status).toBe(404);
  expect((await dispatch.api("/v2/flowControl/acme-key/pin?parallelism=1", { method: "POST" })).status).toBe(404);
  expect((await dispatch.api("/v2/flowControl/acme-key/pause", { method: "POST" })).status).toBe(404);
  const state = await (await acme.api("/v2/flowControl/acme-key")).json();
  expect([state.isPaused, state.parallelismMax, state.rateMax]).toEqual([false, 0, 5]);
});
