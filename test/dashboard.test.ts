/**
 * The dashboard over plain HTTP (the browser tests drive its pages): its
 * session cookie and CSRF tokens, that nothing of it answers without a
 * session whose token is still configured, and that odd input — a NUL, bytes
 * that are not UTF-8, oversize values, unknown parameters and ids — answers a
 * 4xx page naming what was wrong and changes nothing, on every route the
 * router lists.
 */
import { describe, expect, it } from "vitest";
import { createAccessToken, revokeAccessToken } from "../src/domain/access-tokens/access-tokens";
import { fixedTokenSet } from "../src/domain/access-tokens/token-set";
import { tokenAccess } from "../src/http/dashboard/session/access";
import { MAX_ID_BYTES } from "../src/domain/storable-text";
import { dashboardSession } from "./support/dashboard-session";
import { poll } from "./support/poll";
import { appRoutes } from "./support/routes";
import { startTestService, TEST_TOKEN, useDispatch } from "./support/service";
import { rowCounts } from "./support/rows";

const dispatch = useDispatch({}, { role: "api" });

/** The dashboard's routes, from the router (built only to list them). */
const ROUTES = [
  ...new Set(
    appRoutes()
      .filter((route) => route.path.startsWith("/dashboard") && route.method !== "ALL")
      .map((route) => `${route.method} ${route.path}`),
  ),
];

const BAD_SEGMENTS = ["%00", "%C3%28", "%FF", "x".repeat(MAX_ID_BYTES + 1)];

describe("sessions", () => {
  const page = (cookie: string) => fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie }, redirect: "manual" });
  const rows = () =>
    dispatch.service.sql<{ idDigest: Buffer; tokenDigest: Buffer; role: string }[]>`
      select id_digest as "idDigest", token_digest as "tokenDigest", role from dispatch.dashboard_sessions`;

  it("are random ids kept server-side: the table holds neither the cookie nor the token", async () => {
    const { cookie } = await signIn();
    const id = cookie.split("=")[1]!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const dump = JSON.stringify((await rows()).map((row) => [row.idDigest.toString("base64url"), row.tokenDigest.toString("base64url"), row.role]));
    expect(dump).not.toContain(id);
    expect(dump).not.toContain(TEST_TOKEN);
    expect((await page(cookie)).status).toBe(200);
  });

  it("refuses a cookie made from what a copy of the table holds", async () => {
    await signIn();
    for (const row of await rows()) {
      for (const forged of [row.idDigest.toString("base64url").slice(0, 43), row.tokenDigest.toString("base64url").slice(0, 43)]) {
        expect((await page(`dispatch_session=${forged}`)).status).toBe(303);
      }
    }
  });

  it("ends at sign-out: the signed-out cookie is refused", async () => {
    const { cookie, csrf } = await signIn();
    expect((await page(cookie)).status).toBe(200);
    const out = await fetch(`${dispatch.baseUrl}/dashboard/logout`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: `_csrf=${csrf}`,
      redirect: "manual",
    });
    expect(out.status).toBe(303);
    expect((await page(cookie)).status).toBe(303);
  });

  it("ends when idle longer than DISPATCH_SESSION_IDLE, and at the end of its lifetime", async () => {
    const { sql } = dispatch.service;
    const idle = await signIn();
    expect((await page(idle.cookie)).status).toBe(200);
    // Moved back in time rather than waited for: an hour and a second without a request.
    await sql`update dispatch.dashboard_sessions set last_seen_at = now() - interval '1 hour 1 second'`;
    expect((await page(idle.cookie)).status).toBe(303);
    const old = await signIn();
    await sql`update dispatch.dashboard_sessions set expires_at = now() - interval '1 second'`;
    expect((await page(old.cookie)).status).toBe(303);
  });

  it("binds a form's CSRF token to its session", async () => {
    await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "csrf-bound" }) });
    const [one, other] = [await signIn(), await signIn()];
    expect(one.csrf).not.toBe(other.csrf);
    const pause = (cookie: string, csrf: string) =>
      fetch(`${dispatch.baseUrl}/dashboard/queues/csrf-bound/pause`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: `_csrf=${csrf}`,
        redirect: "manual",
      });
    expect((await pause(one.cookie, other.csrf)).status).toBe(403);
    expect((await pause(one.cookie, one.csrf)).status).toBe(303);
  });

  it("refuses sign-in and sign-out posted from another site (Origin or Sec-Fetch-Site), storing nothing", async () => {
    const before = (await rows()).length;
    const crossSite: Record<string, string>[] = [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }, { origin: "null" }];
    for (const headers of crossSite) {
      const response = await fetch(`${dispatch.baseUrl}/dashboard/login`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: TEST_TOKEN }),
        redirect: "manual",
      });
      expect(response.status).toBe(403);
      expect(response.headers.get("set-cookie")).toBeNull();
      expect(await response.text()).toContain("came from another site");
    }
    expect((await rows()).length).toBe(before);
    const { cookie } = await signIn();
    const out = await fetch(`${dispatch.baseUrl}/dashboard/logout`, { method: "POST", headers: { cookie, origin: "https://evil.example" }, redirect: "manual" });
    expect(out.status).toBe(403);
    expect((await page(cookie)).status).toBe(200);
    // The same site, as a browser says it, signs in.
    const same = await fetch(`${dispatch.baseUrl}/dashboard/login`, {
      method: "POST",
      headers: { origin: dispatch.baseUrl, "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ token: TEST_TOKEN }),
      redirect: "manual",
    });
    expect(same.status).toBe(303);
  });

  it("knows full and read-only tokens, the admin token, and nothing else", () => {
    const access = tokenAccess(fixedTokenSet(["full-token-0123456789"], ["readonly-token-0123456789"]), "admin-token-0123456789");
    expect(access.grantOf("full-token-0123456789")).toEqual({ access: "full", project: "default", admin: false });
    expect(access.grantOf("readonly-token-0123456789")).toEqual({ access: "readonly", project: "default", admin: false });
    expect(access.grantOf("admin-token-0123456789")).toEqual({ access: "full", project: "default", admin: true });
    expect(tokenAccess(fixedTokenSet(["full-token-0123456789"], []), null).grantOf("admin-token-0123456789")).toBeNull();
    expect(access.grantOf("full-token-012345678")).toBeNull();
    expect(access.grantOfDigest(Buffer.alloc(3))).toBeNull();
  });
});

/** A signed-in session: its cookie header and CSRF token. */
const signIn = (baseUrl = dispatch.baseUrl, token = TEST_TOKEN) => dashboardSession(baseUrl, token);

const pathOf = (pattern: string, bad: Record<string, string> = {}) =>
  pattern.replace(/:(\w+)/g, (_, name: string) => bad[name] ?? "probe");

describe("access", () => {
  it("answers nothing but the sign-in page and the assets without a session", async () => {
    for (const route of ROUTES) {
      const [method, pattern] = route.split(" ") as [string, string];
      if (pattern === "/dashboard/login" || pattern === "/dashboard/logout" || pattern.startsWith("/dashboard/assets")) continue;
      const response = await fetch(`${dispatch.baseUrl}${pathOf(pattern)}`, { method, redirect: "manual" });
      expect([route, response.status, response.headers.get("location")]).toEqual([route, 303, expect.stringContaining("/dashboard/login")]);
    }
  });

  it("ends the sessions of a token that is no longer configured", async () => {
    const { cookie } = await signIn();
    const other = await startTestService({ tokens: ["another-token-0123456789"] }, { role: "api", databaseUrl: dispatch.service.databaseUrl });
    try {
      const response = await fetch(`${other.baseUrl}/dashboard`, { headers: { cookie }, redirect: "manual" });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toContain("/dashboard/login");
    } finally {
      await other.stop();
    }
  });

  it("signs in a token made with `dispatch token create`, and ends its sessions once it is revoked", async () => {
    const { sql } = dispatch.service;
    const { token } = await sql.begin((tx) => createAccessToken(tx, { name: "dashboard-probe", readOnly: false, project: "default" }));
    const signedIn = async () => {
      const response = await fetch(`${dispatch.baseUrl}/dashboard/login`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
      return response.status === 303 && response.headers.get("set-cookie")!.split(";")[0]!;
    };
    const cookie = await poll(signedIn, "the created token accepted");
    expect((await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
    await sql.begin((tx) => revokeAccessToken(tx, "dashboard-probe"));
    const ended = async () => (await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie }, redirect: "manual" })).status === 303;
    await poll(ended, "the revoked token's session ended");
  });

  it("refuses a form without the session's CSRF token, changing nothing", async () => {
    await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "csrf-probe" }) });
    const { cookie } = await signIn();
    const response = await fetch(`${dispatch.baseUrl}/dashboard/queues/csrf-probe/pause`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: "_csrf=forged",
      redirect: "manual",
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("this form has expired");
    expect((await (await dispatch.api("/v2/queues/csrf-probe")).json()).paused).toBe(false);
  });
});

describe("odd input answers a 4xx page and changes nothing", () => {
  it.each(ROUTES)("%s", async (route) => {
    const [method, pattern] = route.split(" ") as [string, string];
    const { cookie, csrf } = await signIn();
    const before = await rowCounts(dispatch);
    const failures: string[] = [];
    const probe = async (path: string, names: string, body?: string) => {
      const response = await fetch(`${dispatch.baseUrl}${path}`, {
        method,
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: method === "GET" ? undefined : (body ?? `_csrf=${csrf}`),
        redirect: "manual",
      });
      const text = await response.text();
      if (response.status < 400 || response.status > 499 || !text.includes(names) || !text.includes("<html")) {
        failures.push(`${method} ${path.slice(0, 100)} ${String(body ?? "").slice(0, 60)} -> ${response.status} ${text.slice(0, 300)}`);
      }
    };
    for (const name of [...pattern.matchAll(/:(\w+)/g)].map((match) => match[1]!)) {
      for (const bad of BAD_SEGMENTS) await probe(pathOf(pattern, { [name]: bad }), `path parameter &quot;${name}&quot;`);
    }
    for (const bad of ["%00", "%FF"]) await probe(`${pathOf(pattern)}?cursor=${bad}`, "query parameter &quot;cursor&quot;");
    if (method === "POST" && pattern !== "/dashboard/logout") {
      await probe(pathOf(pattern), "form field &quot;field&quot;", `_csrf=${csrf}&field=a%00b`);
      await probe(pathOf(pattern), "form field &quot;field&quot;", `_csrf=${csrf}&field=%FF`);
      await probe(pathOf(pattern), "a dashboard form is at most", `_csrf=${csrf}&field=${"x".repeat(70_000)}`);
    }
    expect(failures).toEqual([]);
    expect(await rowCounts(dispatch)).toEqual(before);
  });

  it("answers 400 to unknown parameters and bad filter values, and 404 to unknown ids", async () => {
    const { cookie, csrf } = await signIn();
    const get = (path: string) => fetch(`${dispatch.baseUrl}${path}`, { headers: { cookie } });
    const post = (path: string) =>
      fetch(`${dispatch.baseUrl}${path}`, { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: `_csrf=${csrf}`, redirect: "manual" });
    const before = await rowCounts(dispatch);
    const expectations: [Promise<Response>, number, string][] = [
      [get("/dashboard/messages?stat=FAILED"), 400, "unknown parameter"],
      [get("/dashboard/messages?state=LOST"), 400, "state must be one of"],
      [get("/dashboard/messages?since=3y"), 400, "since must be one of"],
      [get("/dashboard/messages?from=yesterday"), 400, "from must be a UTC time"],
      [get("/dashboard/messages?cursor=nonsense"), 400, "invalid cursor"],
      [get("/dashboard/messages/msg_unknown?body=pdf"), 400, "body must be text, json or hex"],
      [get("/dashboard/dlq?responseStatus=5xx"), 400, "responseStatus"],
      [get("/dashboard/workflows?state=DONE"), 400, "unknown state"],
      [get("/dashboard/workflows?cursor=abc"), 400, "invalid cursor"],
      [get("/dashboard/messages/msg_unknown"), 404, "not found"],
      [get("/dashboard/dlq/dlq_unknown"), 404, "not found"],
      [get("/dashboard/workflows/wfr_unknown"), 404, "not found"],
      [get("/dashboard/no-such-page"), 404, "no page"],
      [post("/dashboard/messages/msg_unknown/cancel"), 404, "not found"],
      [post("/dashboard/dlq/dlq_unknown/retry"), 404, "not found"],
      [post("/dashboard/dlq/dlq_unknown/delete"), 404, "not found"],
      [post("/dashboard/queues/unknown/pause"), 404, "not found"],
      [post("/dashboard/schedules/unknown/resume"), 404, "not found"],
      [post("/dashboard/flow-control/unknown/pause"), 404, "not found"],
      [post("/dashboard/flow-control/unknown/reset-rate"), 404, "not found"],
      [post("/dashboard/flow-control/unknown/unpin"), 400, "limit must be parallelism or rate"],
      [post("/dashboard/flow-control/unknown/pin"), 400, "pin needs parallelism, rate or period"],
      [get("/dashboard/messages?flowControlKey=a,"), 400, "flowControlKey must not be empty"],
      [post("/dashboard/workflows/wfr_unknown/cancel"), 404, "not running"],
      [post("/dashboard/workflows/wfr_unknown/restart"), 404, "not found"],
      [post("/dashboard/url-groups/endpoints/add"), 400, "group is required"],
    ];
    for (const [pending, status, text] of expectations) {
      const response = await pending;
      const body = await response.text();
      expect([response.url, response.status, body.includes(text)]).toEqual([response.url, status, true]);
    }
    expect(await rowCounts(dispatch)).toEqual(before);
  });
});

