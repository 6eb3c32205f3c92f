/**
 * URL groups are each project's: two projects may have a group of one name,
 * and a publish to it fans out to the publishing project's endpoints only.
 */
import { expect, it } from "vitest";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

const addEndpoint = (api: typeof dispatch.api, group: string, path: string) =>
  api(`/v2/topics/${group}/endpoints`, { method: "POST", body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/${path}` }] }) });
const endpointsOf = async (api: typeof dispatch.api, group: string) =>
  (await (await api(`/v2/topics/${group}`)).json()).endpoints.map((endpoint: { url: string }) => endpoint.url);

it("keeps two projects' groups of one name apart, and fans a publish out to its project's", async () => {
  expect((await addEndpoint(dispatch.api, "team", "default-team")).status).toBe(200);
  expect((await addEndpoint(acme.api, "team", "acme-team")).status).toBe(200);
  expect((await addEndpoint(dispatch.api, "only-default", "only")).status).toBe(200);
  expect(await endpointsOf(dispatch.api, "team")).toEqual([`${receiver.url}/default-team`]);
  expect(await endpointsOf(acme.api, "team")).toEqual([`${receiver.url}/acme-team`]);
  const names = async (api: typeof dispatch.api) => (await (await api("/v2/topics")).json()).map((group: { name: string }) => group.name);
  expect(await names(dispatch.api)).toEqual(["only-default", "team"]);
  expect(await names(acme.api)).toEqual(["team"]);

  expect((await acme.api("/v2/publish/team", { method: "POST", body: "to acme's team" })).status).toBe(200);
  const [arrived] = await receiver.waitFor(1);
  expect(arrived!.path).toBe("/acme-team");
  expect((await acme.api("/v2/publish/only-default", { method: "POST", body: "x" })).status).toBe(404);
});

it("deletes and changes its own project's group only", async () => {
  expect((await acme.api("/v2/topics/only-default")).status).toBe(404);
  expect((await acme.api("/v2/topics/only-default", { method: "DELETE" })).status).toBe(200);
  expect((await dispatch.api("/v2/topics/only-default")).status).toBe(200);
  const removed = await acme.api("/v2/topics/only-default/endpoints", {
    method: "DELETE",
    body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/only` }] }),
  });
  expect(removed.status).toBe(404);
  expect(await endpointsOf(dispatch.api, "only-default")).toEqual([`${receiver.url}/only`]);
  expect((await acme.api("/v2/topics/team", { method: "DELETE" })).status).toBe(200);
  expect((await acme.api("/v2/topics/team")).status).toBe(404);
  expect(await endpointsOf(dispatch.api, "team")).toEqual([`${receiver.url}/default-team`]);
});
