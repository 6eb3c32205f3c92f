/**
 * Read-only tokens (`DISPATCH_READONLY_TOKEN`): every route of the router is
 * walked with one. Every read answers (2xx, or 404 for a resource that does
 * not exist); every write, and the two reads kept from it (the signing keys,
 * and a run's step list, which carries unredacted data for the executing
 * SDK), answer 403 with a JSON error and change no row. What may be called is
 * an allow-list, the operations declared `read`; the route list comes from
 * the router itself, so a new route that declares no access fails here.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config";
import { useReceiver } from "./support/receiver";
import { type Access, operationOf } from "../src/http/openapi/operation";
import { appRoutes } from "./support/routes";
import { request, TEST_TOKEN, useDispatch } from "./support/service";
import { rowCounts } from "./support/rows";

const READONLY = "readonly-token-0123456789";

const tokenRoutes = appRoutes().filter((route) => route.method !== "ALL" && route.path.startsWith("/v2/") && !route.path.startsWith("/v2/workflows/hooks"));
/** Every /v2 route that needs a token, as "METHOD /path", from the router. */
const ROUTES = [...new Set(tokenRoutes.map((route) => `${route.method} ${route.path}`))];
/** What each route's operation declares (its `describe` is one of the route's handlers), by route. */
const DECLARED = new Map<string, Access | undefined>(ROUTES.map((route) => [route, undefined]));
for (const route of tokenRoutes) {
  const spec = operationOf(route.handler);
  if (spec) DECLARED.set(`${route.method} ${route.path}`, spec.access);
}

const dispatch = useDispatch({ readonlyTokens: [READONLY] });
const receiver = useReceiver((req) => (req.path === "/fail" ? { status: 500 } : { status: 200, body: "ok" }));
/** Values of path parameters that name things that exist. */
const existing: Record<string, string> = {};

beforeAll(async () => {
  const published = await dispatch.api(`/v2/publish/${receiver.url}/ok`, { method: "POST", body: "hello" });
  existing.id = (await published.json()).messageId;
  await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "ro-queue", parallelism: 1 }) });
  await dispatch.api("/v2/topics/ro-group/endpoints", { method: "POST", body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/g` }] }) });
  await dispatch.api(`/v2/schedules/${receiver.url}/s`, { method: "POST", headers: { "Svc-Cron": "0 0 1 1 *", "Svc-Schedule-Id": "ro-schedule" } });
  await dispatch.api(`/v2/publish/${receiver.url}/fail`, { method: "POST", headers: { "Svc-Retries": "0" }, body: "x" });
  for (let tries = 0; tries < 100 && existing.dlqId === undefined; tries++) {
    const dlq = await (await dispatch.api("/v2/dlq")).json();
    existing.dlqId = dlq.messages?.[0]?.dlqId;
    if (existing.dlqId === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(existing.dlqId).toBeDefined();
});

/** `route`'s path with its parameters filled in (existing things where the test made them; no workflow runs). */
function pathOf(route: string): string {
  const path = route.split(" ")[1]!;
  const workflow = path.startsWith("/v2/workflows/");
  const filled = path
    .replace(/\*$/, `${receiver.url}/readonly`)
    .replace(/:destination\{[^}]*\}/, receiver.url)
    .replace(/:name\b/, path.startsWith("/v2/topics") ? "ro-group" : "ro-queue")
    .replace(/:queue\b/, "ro-queue")
    .replace(/^\/v2\/schedules\/:id\b/, "/v2/schedules/ro-schedule")
    .replace(/:(\w+)/g, (_, name: string) => (workflow ? undefined : existing[name]) ?? `probe-${name}`);
  // The events view of the workflow logs is only grouped by run (docs/workflow-protocol.md §11).
  return filled === "/v2/workflows/events" ? `${filled}?groupBy=workflowRunId` : filled;
}

const asReadonly = (route: string) =>
  request(`${dispatch.baseUrl}${pathOf(route)}`, {
    method: route.split(" ")[0],
    headers: { Authorization: `Bearer ${READONLY}`, "Content-Type": "application/json" },
    body: route.startsWith("GET") ? undefined : "{}",
  });


describe("a read-only token", () => {
  // What a read-only token may call is an allow-list: the operations declared `read`.
  const reads = ROUTES.filter((route) => DECLARED.get(route) === "read");
  const writes = ROUTES.filter((route) => !reads.includes(route));
  const denied = ["GET /v2/keys", "GET /v2/workflows/runs/:id"];

  it("is allowed what the operations declare: every route declares its access, and only reads are declared `read`", () => {
    const undeclared = ROUTES.filter((route) => !["read", "full-token"].includes(DECLARED.get(route) ?? "none"));
    expect(undeclared, "routes whose operation declares no token access").toEqual([]);
    expect(reads.filter((route) => !route.startsWith("GET ")), "`read` operations that are not GETs").toEqual([]);
  });

  it("covers the router: writes and reads are both there", () => {
    expect(writes).toContain("POST /v2/publish/*");
    expect(writes).toContain("DELETE /v2/messages/:id");
    expect(writes).toEqual(expect.arrayContaining(denied));
    expect(reads).toContain("GET /v2/logs");
    expect(reads.length + writes.length).toBe(ROUTES.length);
  });

  it.each(writes)("%s answers 403 and changes nothing", async (route) => {
    const before = await rowCounts(dispatch);
    const response = await asReadonly(route);
    expect(response.status, await response.clone().text()).toBe(403);
    expect((await response.json()).error).toMatch(/read-only/);
    expect(await rowCounts(dispatch)).toEqual(before);
  });

  it.each(reads)("%s reads", async (route) => {
    const response = await asReadonly(route);
    const text = await response.clone().text();
    // A route may not know the probe value it was given (a run id, an event id): that is a read too.
    expect([200, 404], `${route}: ${text}`).toContain(response.status);
    if (response.status === 404) expect(pathOf(route), text).toMatch(/probe-/);
  });

  it("reads the message, the queue, the URL group and the DLQ entry the full token made", async () => {
    for (const path of [`/v2/messages/${existing.id}`, "/v2/queues/ro-queue", "/v2/topics/ro-group", `/v2/dlq/${existing.dlqId}`]) {
      const response = await asReadonly(`GET ${path}`);
      expect(response.status, path).toBe(200);
    }
  });

  it("is not a full token, and a full token still writes", async () => {
    const before = await rowCounts(dispatch);
    const response = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "ro-full", parallelism: 2 }) });
    expect(response.status).toBe(200);
    expect((await rowCounts(dispatch))["dispatch.queues"]).toBe(before["dispatch.queues"]! + 1);
    const wrong = await request(`${dispatch.baseUrl}/v2/logs`, { headers: { Authorization: "Bearer not-a-token-at-all-0000" } });
    expect(wrong.status).toBe(401);
  });
});

describe("configuration", () => {
  it("refuses a token that is both full and read-only", () => {
    expect(() => loadConfig({ DISPATCH_TOKEN: READONLY, DISPATCH_READONLY_TOKEN: READONLY })).toThrow(ConfigError);
    expect(loadConfig({ DISPATCH_READONLY_TOKEN: `${READONLY}, other-readonly-token-000` }).readonlyTokens).toHaveLength(2);
  });
});
