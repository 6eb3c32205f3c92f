/**
 * Managing URL groups (topics) through the API: a group is made by its first
 * endpoint and its endpoints upserted, shown in get and list, removed by name
 * or URL (the last one deleting the group), the group deleted, an unknown
 * group, and the refusals of bad names and URLs.
 */
import { describe, expect, it } from "vitest";
import { countMessages } from "../support/rows";
import { useDispatch } from "../support/service";
import { byUrl, groupApi, json } from "./fixtures";

const dispatch = useDispatch();
const { addEndpoints, publishToGroup } = groupApi(dispatch);

describe("managing URL groups", () => {
  it("creates a group on the first add, upserts endpoints, and shows it in get and list", async () => {
    const before = Date.now();
    await addEndpoints("orders", [
      { name: "billing", url: "http://127.0.0.1:9/billing" },
      { url: "http://127.0.0.1:9/audit" },
    ]);
    const got = await dispatch.api("/v2/topics/orders");
    expect(got.status).toBe(200);
    const group = await got.json();
    expect(group.name).toBe("orders");
    expect(group.createdAt).toBeGreaterThanOrEqual(before - 5000);
    expect(group.updatedAt).toBeGreaterThanOrEqual(group.createdAt);
    expect([...group.endpoints].sort(byUrl)).toEqual([
      { url: "http://127.0.0.1:9/audit" },
      { name: "billing", url: "http://127.0.0.1:9/billing" },
    ]);

    // Adding again: a new endpoint is added, a known URL gets its (new) name, nothing is duplicated.
    await addEndpoints("orders", [
      { name: "audit", url: "http://127.0.0.1:9/audit" },
      { name: "shipping", url: "http://127.0.0.1:9/shipping" },
    ]);
    const again = await (await dispatch.api("/v2/topics/orders")).json();
    expect([...again.endpoints].sort(byUrl)).toEqual([
      { name: "audit", url: "http://127.0.0.1:9/audit" },
      { name: "billing", url: "http://127.0.0.1:9/billing" },
      { name: "shipping", url: "http://127.0.0.1:9/shipping" },
    ]);
    expect(again.createdAt).toBe(group.createdAt);
    expect(again.updatedAt).toBeGreaterThanOrEqual(group.updatedAt);

    await addEndpoints("payments", [{ url: "http://127.0.0.1:9/payments" }]);
    const list = await dispatch.api("/v2/topics");
    expect(list.status).toBe(200);
    const groups = await list.json();
    expect(Array.isArray(groups)).toBe(true);
    const names = groups.map((g: { name: string }) => g.name);
    expect(names).toEqual(expect.arrayContaining(["orders", "payments"]));
    for (const g of groups) {
      expect(Object.keys(g).sort()).toEqual(["createdAt", "endpoints", "name", "updatedAt"]);
      expect(typeof g.createdAt).toBe("number");
      expect(typeof g.updatedAt).toBe("number");
    }
    const payments = groups.find((g: { name: string }) => g.name === "payments");
    expect(payments.endpoints).toEqual([{ url: "http://127.0.0.1:9/payments" }]);
    const orders = groups.find((g: { name: string }) => g.name === "orders");
    expect(orders.endpoints).toHaveLength(3);
  });

  it("a URL listed twice in one request is stored once (a later name wins, a nameless repeat keeps it)", async () => {
    await addEndpoints("repeated", [
      { url: "http://127.0.0.1:9/same" },
      { name: "named", url: "http://127.0.0.1:9/same" },
      { url: "http://127.0.0.1:9/same" },
      { name: "other", url: "http://127.0.0.1:9/other" },
    ]);
    const group = await (await dispatch.api("/v2/topics/repeated")).json();
    expect([...group.endpoints].sort(byUrl)).toEqual([
      { name: "other", url: "http://127.0.0.1:9/other" },
      { name: "named", url: "http://127.0.0.1:9/same" },
    ]);
  });

  it("removes endpoints by name and by url, and deletes the group with its last endpoint", async () => {
    await addEndpoints("removals", [
      { name: "one", url: "http://127.0.0.1:9/one" },
      { name: "two", url: "http://127.0.0.1:9/two" },
      { name: "three", url: "http://127.0.0.1:9/three" },
    ]);

    const byName = await dispatch.api("/v2/topics/removals/endpoints", {
      method: "DELETE",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ endpoints: [{ name: "one" }] }),
    });
    expect(byName.status).toBe(200);
    let group = await (await dispatch.api("/v2/topics/removals")).json();
    expect(group.endpoints.map((e: { name: string }) => e.name).sort()).toEqual(["three", "two"]);

    const byUrlResponse = await dispatch.api("/v2/topics/removals/endpoints", {
      method: "DELETE",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ endpoints: [{ url: "http://127.0.0.1:9/two" }] }),
    });
    expect(byUrlResponse.status).toBe(200);
    group = await (await dispatch.api("/v2/topics/removals")).json();
    expect(group.endpoints).toEqual([{ name: "three", url: "http://127.0.0.1:9/three" }]);

    const last = await dispatch.api("/v2/topics/removals/endpoints", {
      method: "DELETE",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ endpoints: [{ name: "three", url: "http://127.0.0.1:9/three" }] }),
    });
    expect(last.status).toBe(200);
    expect((await dispatch.api("/v2/topics/removals")).status).toBe(404);
  });

  it("DELETE /v2/topics/{name} deletes the group: get and publish are then 404, a second delete changes nothing (200)", async () => {
    await addEndpoints("doomed", [{ url: "http://127.0.0.1:9/doomed" }]);
    const deleted = await dispatch.api("/v2/topics/doomed", { method: "DELETE" });
    expect(deleted.status).toBe(200);

    expect((await dispatch.api("/v2/topics/doomed")).status).toBe(404);
    const list = await (await dispatch.api("/v2/topics")).json();
    expect(list.map((g: { name: string }) => g.name)).not.toContain("doomed");
    expect((await publishToGroup("doomed")).status).toBe(404);
    expect((await dispatch.api("/v2/topics/doomed", { method: "DELETE" })).status).toBe(200);
  });

  it("an unknown group is 404 with an error body for get, remove-endpoints and publish; deleting it changes nothing (200)", async () => {
    const get = await dispatch.api("/v2/topics/no-such-group");
    expect(get.status).toBe(404);
    expect((await get.json()).error).toMatch(/no-such-group/);
    // Clients delete before they create, without a guard (docs/hosted-api.md §16 #24).
    expect((await dispatch.api("/v2/topics/no-such-group", { method: "DELETE" })).status).toBe(200);
    const remove = await dispatch.api("/v2/topics/no-such-group/endpoints", {
      method: "DELETE",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ endpoints: [{ name: "x" }] }),
    });
    expect(remove.status).toBe(404);
    const publish = await publishToGroup("no-such-group");
    expect(publish.status).toBe(404);
    expect((await publish.json()).error).toMatch(/no-such-group/);
    expect(await countMessages(dispatch, { topicName: "no-such-group" })).toBe(0);
  });

  it("invalid group names, endpoint names and endpoint URLs are 400 and create nothing", async () => {
    const cases: [string, unknown][] = [
      ["bad%20name", { endpoints: [{ url: "http://127.0.0.1:9/a" }] }],
      ["bad%24name", { endpoints: [{ url: "http://127.0.0.1:9/a" }] }],
      ["x".repeat(101), { endpoints: [{ url: "http://127.0.0.1:9/a" }] }],
      ["good-name", { endpoints: [{ name: "bad name", url: "http://127.0.0.1:9/a" }] }],
      ["good-name", { endpoints: [{ url: "ftp://127.0.0.1/a" }] }],
      ["good-name", { endpoints: [{ url: "not a url" }] }],
      ["good-name", { endpoints: [{ name: "no-url" }] }],
      ["good-name", { endpoints: [] }],
      ["good-name", { nope: true }],
    ];
    for (const [name, body] of cases) {
      const response = await dispatch.api(`/v2/topics/${name}/endpoints`, json(body));
      expect(response.status, `${name} ${JSON.stringify(body)}`).toBe(400);
      expect(typeof (await response.json()).error).toBe("string");
    }
    expect((await dispatch.api("/v2/topics/good-name")).status).toBe(404);
    const names = (await (await dispatch.api("/v2/topics")).json()).map((g: { name: string }) => g.name);
    expect(names).not.toContain("good-name");
    // A destination that is neither a URL nor a valid group name is refused.
    expect((await publishToGroup("bad$name")).status).toBe(400);
  });
});
